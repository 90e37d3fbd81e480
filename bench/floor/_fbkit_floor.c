/* The floor of profile-hook tracing on this interpreter, for bench/bench_trace.py: a C
 * profile callback that does nothing (every call and return still makes CPython build the
 * frame object and call it), and a context switch that only remembers a name. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

static PyObject* current;

static int Empty(PyObject* self, PyFrameObject* frame, int what, PyObject* arg) {
  (void)self, (void)frame, (void)what, (void)arg;
  return 0;
}

static PyObject* Install(PyObject* self, PyObject* unused) {
  (void)self, (void)unused;
  PyEval_SetProfile(Empty, NULL);
  Py_RETURN_NONE;
}

/* As a Python-level profile function (threading.setprofile): installs on the new thread. */
static PyObject* ThreadStart(PyObject* self, PyObject* args) {
  (void)self, (void)args;
  PyEval_SetProfile(Empty, NULL);
  Py_RETURN_NONE;
}

static PyObject* SetContext(PyObject* self, PyObject* name) {
  (void)self;
  Py_INCREF(name);
  Py_XSETREF(current, name);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", Install, METH_NOARGS, "Install the empty profile hook on this thread."},
    {"thread_start", ThreadStart, METH_VARARGS, "threading.setprofile callback."},
    {"set_context", SetContext, METH_O, "Remember the current context's name."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_fbkit_floor",
                                    .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__fbkit_floor(void) { return PyModule_Create(&module); }
