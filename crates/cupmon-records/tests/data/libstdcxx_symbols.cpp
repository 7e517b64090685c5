#include <regex>
#include <map>
#include <unordered_map>
#include <functional>
#include <memory>
#include <string>
#include <iostream>
#include <sstream>
#include <tuple>
#include <variant>
#include <optional>
#include <algorithm>
std::string run(const std::string& s) {
  std::regex r("a+b*"); std::smatch m; std::regex_search(s, m, r);
  std::map<std::string, std::vector<int>> mp; mp[s].push_back(1);
  std::unordered_map<int, std::function<int(int)>> um; um[1] = [](int x) { return x; };
  auto sp = std::make_shared<std::tuple<int, double>>(1, 2.0);
  std::variant<int, std::string> v = s; std::optional<long> o = 3;
  std::ostringstream os; os << s << *o << std::get<0>(*sp);
  std::vector<std::pair<int, std::string>> vec; std::sort(vec.begin(), vec.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::cout << os.str();
  return m.str() + std::to_string(std::get<int>(v = 1));
}
