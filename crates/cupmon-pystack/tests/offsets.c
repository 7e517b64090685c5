/* Prints the offsets cupmon-pystack reads, from a CPython's own headers (compiled by
   tests/offsets.rs against each CPython 3.11+ found; compared with src/layout.rs). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#define P(n,e) printf("%s %zu\n", n, (size_t)(e))
int main(void){
#if PY_VERSION_HEX >= 0x030d0000
  P("tstate.current_frame", offsetof(PyThreadState, current_frame));
  P("frame.code", offsetof(_PyInterpreterFrame, f_executable));
  P("frame.instr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
  P("tstate.cframe", offsetof(PyThreadState, cframe));
  P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
  P("frame.code", offsetof(_PyInterpreterFrame, f_code));
  P("frame.instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
  P("frame.previous", offsetof(_PyInterpreterFrame, previous));
  P("frame.owner", offsetof(_PyInterpreterFrame, owner));
  P("code.filename", offsetof(PyCodeObject, co_filename));
  P("code.name", offsetof(PyCodeObject, co_name));
  P("code.qualname", offsetof(PyCodeObject, co_qualname));
  P("code.firstlineno", offsetof(PyCodeObject, co_firstlineno));
  P("code.code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  P("ascii.size", sizeof(PyASCIIObject));
  P("ascii.length", offsetof(PyASCIIObject, length));
  P("ascii.state", offsetof(PyASCIIObject, state));
  P("compact.size", sizeof(PyCompactUnicodeObject));
  P("object.type", offsetof(PyObject, ob_type));
  P("FRAME_OWNED_BY_THREAD", FRAME_OWNED_BY_THREAD);
  P("FRAME_OWNED_BY_GENERATOR", FRAME_OWNED_BY_GENERATOR);
#ifdef FRAME_OWNED_BY_CSTACK
  P("FRAME_OWNED_BY_CSTACK", FRAME_OWNED_BY_CSTACK);
#endif
  return 0;
}
