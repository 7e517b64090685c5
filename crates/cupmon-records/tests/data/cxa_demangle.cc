// Demangles each line of stdin with libstdc++'s abi::__cxa_demangle (what Kineto
// and PyTorch use); a name that does not demangle is printed unchanged.
#include <cxxabi.h>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    int status = 0;
    char *out = abi::__cxa_demangle(line.c_str(), nullptr, nullptr, &status);
    std::cout << (status == 0 && out ? out : line) << '\n';
    std::free(out);
  }
}
