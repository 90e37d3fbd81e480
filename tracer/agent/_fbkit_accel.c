/* fbkit's tracing accelerator: the profile callback of fbkit_agent.Recorder in C.
 *
 * Compiled by fb-graph trace against the target interpreter's headers (cached per
 * interpreter version and ABI) and loaded by the agent; the pure-Python Recorder.profile is
 * the fallback and the specification: on a call event whose code is repository code (asked
 * once per code object from `classify`), count the edge from the nearest repository frame
 * below it (NULL when none, or when the search meets the frame a running garbage collection
 * interrupted, given by `set_collecting`) in the current context's table, or in the import
 * context while module-level code of a non-test module runs.
 *
 * With a sampler (`set_sampler`), the first `samples` calls of each edge in each context
 * (outside import time; whenever takes happen: an edge keeps its slot, with the calls counted
 * before, across takes) go to Python's `sample_call(frame)`; when it answers true the frame's return
 * goes to `sample_return(frame, value, raised)` (at most kMaxPending such frames at once).
 *
 * Code objects are keyed by address; the tracer holds a reference to every code object it
 * has seen, so an address is never reused while it is in a table. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stdint.h>
#include <string.h>

enum { kUnknown = 0, kOutside = 1, kInside = 2, kModule = 3 };
enum { kMaxPending = 64 };

/* code address -> classification */
typedef struct {
  PyObject** keys;
  uint8_t* values;
  size_t cap, len;
} CodeMap;

typedef struct {
  PyObject *caller, *callee;
  long long count;  /* since the last take */
  long long before; /* counted before the last take, up to the sampler's `samples` */
} Edge;

/* (caller, callee) -> count, for one context */
typedef struct {
  PyObject* name;
  Edge* slots;
  size_t cap, len;
} EdgeTable;

typedef struct {
  PyObject_HEAD
  PyObject* classify; /* callable(code) -> info or None */
  PyObject* module_ids; /* set of ids of <module> codes of non-test modules (shared) */
  CodeMap codes;
  EdgeTable* tables;
  size_t ntables;
  size_t current;
  size_t import_table;
  long import_depth;
  PyObject* collecting; /* the frame a running garbage collection interrupted, or NULL */
  PyObject* sample_call;   /* callable(frame) -> bool, or NULL */
  PyObject* sample_return; /* callable(frame, value, raised), or NULL */
  long long samples;       /* calls sampled per edge */
  void* pending[kMaxPending]; /* frames whose return is sampled (addresses only) */
  size_t npending;
} Tracer;

static size_t HashPtr(const void* p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static int CodeMapGrow(CodeMap* m) {
  size_t cap = m->cap ? m->cap * 2 : 1024;
  PyObject** keys = PyMem_Calloc(cap, sizeof(PyObject*));
  uint8_t* values = PyMem_Calloc(cap, 1);
  if (!keys || !values) {
    PyMem_Free(keys);
    PyMem_Free(values);
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < m->cap; ++i) {
    if (!m->keys[i]) continue;
    size_t j = HashPtr(m->keys[i]) & (cap - 1);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    values[j] = m->values[i];
  }
  PyMem_Free(m->keys);
  PyMem_Free(m->values);
  m->keys = keys;
  m->values = values;
  m->cap = cap;
  return 0;
}

static uint8_t CodeMapGet(const CodeMap* m, PyObject* code) {
  if (!m->cap) return kUnknown;
  size_t j = HashPtr(code) & (m->cap - 1);
  while (m->keys[j]) {
    if (m->keys[j] == code) return m->values[j];
    j = (j + 1) & (m->cap - 1);
  }
  return kUnknown;
}

static int CodeMapPut(CodeMap* m, PyObject* code, uint8_t value) {
  if ((m->len + 1) * 2 > m->cap && CodeMapGrow(m) < 0) return -1;
  size_t j = HashPtr(code) & (m->cap - 1);
  while (m->keys[j]) j = (j + 1) & (m->cap - 1);
  Py_INCREF(code);
  m->keys[j] = code;
  m->values[j] = value;
  m->len++;
  return 0;
}

/* The classification of a code object, asking Python the first time. */
static int Classify(Tracer* t, PyObject* code) {
  uint8_t v = CodeMapGet(&t->codes, code);
  if (v != kUnknown) return v;
  PyObject* info = PyObject_CallOneArg(t->classify, code);
  if (!info) return -1;
  v = info == Py_None ? kOutside : kInside;
  Py_DECREF(info);
  if (v == kInside) {
    PyObject* id = PyLong_FromVoidPtr(code);
    if (!id) return -1;
    int is_module = PySet_Contains(t->module_ids, id);
    Py_DECREF(id);
    if (is_module < 0) return -1;
    if (is_module) v = kModule;
  }
  if (CodeMapPut(&t->codes, code, v) < 0) return -1;
  return v;
}

static int TableGrow(EdgeTable* e) {
  size_t cap = e->cap ? e->cap * 2 : 256;
  Edge* slots = PyMem_Calloc(cap, sizeof(Edge));
  if (!slots) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < e->cap; ++i) {
    Edge* s = &e->slots[i];
    if (!s->callee) continue;
    size_t j = (HashPtr(s->caller) ^ HashPtr(s->callee) * 31) & (cap - 1);
    while (slots[j].callee) j = (j + 1) & (cap - 1);
    slots[j] = *s;
  }
  PyMem_Free(e->slots);
  e->slots = slots;
  e->cap = cap;
  return 0;
}

/* Counts the edge; *count gets its calls in this context so far (at least up to the samples). */
static int TableAdd(EdgeTable* e, PyObject* caller, PyObject* callee, long long* count) {
  if ((e->len + 1) * 2 > e->cap && TableGrow(e) < 0) return -1;
  size_t j = (HashPtr(caller) ^ HashPtr(callee) * 31) & (e->cap - 1);
  for (;;) {
    Edge* s = &e->slots[j];
    if (!s->callee) {
      s->caller = caller;
      s->callee = callee;
      s->count = 1;
      s->before = 0;
      e->len++;
      *count = 1;
      return 0;
    }
    if (s->callee == callee && s->caller == caller) {
      *count = ++s->count + s->before;
      return 0;
    }
    j = (j + 1) & (e->cap - 1);
  }
}

static int SampleCall(Tracer* t, PyFrameObject* frame);

static int OnCall(Tracer* t, PyFrameObject* frame) {
  PyObject* code = (PyObject*)PyFrame_GetCode(frame);
  int kind = Classify(t, code);
  if (kind <= kOutside) {
    Py_DECREF(code);
    return kind < 0 ? -1 : 0;
  }
  PyObject* caller_code = NULL;
  PyFrameObject* f = PyFrame_GetBack(frame);
  while (f) {
    if ((PyObject*)f == t->collecting) {
      Py_DECREF(f);
      break;
    }
    PyObject* c = (PyObject*)PyFrame_GetCode(f);
    int ck = Classify(t, c);
    if (ck < 0) {
      Py_DECREF(c);
      Py_DECREF(f);
      Py_DECREF(code);
      return -1;
    }
    if (ck >= kInside) {
      caller_code = c; /* borrowed from here on: the code map holds a reference */
      Py_DECREF(c);
      Py_DECREF(f);
      break;
    }
    Py_DECREF(c);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  if (kind == kModule) t->import_depth++;
  size_t table = t->import_depth ? t->import_table : t->current;
  long long count = 0;
  int rc = TableAdd(&t->tables[table], caller_code, code, &count);
  Py_DECREF(code);
  if (rc == 0 && !t->import_depth && t->sample_call && count <= t->samples &&
      t->npending < kMaxPending) {
    rc = SampleCall(t, frame);
  }
  return rc;
}

/* Asks Python to record a call's argument types; remembers the frame when its result is
 * wanted. */
static int SampleCall(Tracer* t, PyFrameObject* frame) {
  PyObject* wanted = PyObject_CallOneArg(t->sample_call, (PyObject*)frame);
  if (!wanted) return -1;
  int yes = PyObject_IsTrue(wanted);
  Py_DECREF(wanted);
  if (yes < 0) return -1;
  if (yes) t->pending[t->npending++] = frame;
  return 0;
}

/* A frame returns: its result's type goes to Python when its call was sampled. */
static int SampleReturn(Tracer* t, PyFrameObject* frame, PyObject* value) {
  for (size_t i = t->npending; i-- > 0;) {
    if (t->pending[i] != frame) continue;
    t->pending[i] = t->pending[--t->npending];
    PyObject* r = PyObject_CallFunctionObjArgs(t->sample_return, (PyObject*)frame,
                                               value ? value : Py_None,
                                               value ? Py_False : Py_True, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
  }
  return 0;
}

static int Profile(PyObject* self, PyFrameObject* frame, int what, PyObject* arg) {
  Tracer* t = (Tracer*)self;
  if (what == PyTrace_CALL) {
    if (OnCall(t, frame) < 0) {
      PyErr_WriteUnraisable(self);
    }
  } else if (what == PyTrace_RETURN) {
    if (t->npending && SampleReturn(t, frame, arg) < 0) PyErr_WriteUnraisable(self);
    if (t->import_depth) {
      PyObject* code = (PyObject*)PyFrame_GetCode(frame);
      if (CodeMapGet(&t->codes, code) == kModule) t->import_depth--;
      Py_DECREF(code);
    }
  }
  return 0;
}

static size_t TableFor(Tracer* t, PyObject* name) {
  for (size_t i = 0; i < t->ntables; ++i) {
    int eq = PyObject_RichCompareBool(t->tables[i].name, name, Py_EQ);
    if (eq > 0) return i;
  }
  EdgeTable* tables = PyMem_Realloc(t->tables, (t->ntables + 1) * sizeof(EdgeTable));
  if (!tables) {
    PyErr_NoMemory();
    return (size_t)-1;
  }
  t->tables = tables;
  memset(&t->tables[t->ntables], 0, sizeof(EdgeTable));
  Py_INCREF(name);
  t->tables[t->ntables].name = name;
  return t->ntables++;
}

static PyObject* Tracer_set_context(Tracer* t, PyObject* name) {
  size_t i = TableFor(t, name);
  if (i == (size_t)-1) return NULL;
  t->current = i;
  Py_RETURN_NONE;
}

static PyObject* Tracer_set_collecting(Tracer* t, PyObject* frame) {
  Py_XSETREF(t->collecting, frame == Py_None ? NULL : Py_NewRef(frame));
  Py_RETURN_NONE;
}

static PyObject* Tracer_set_sampler(Tracer* t, PyObject* args) {
  PyObject *call, *ret;
  long long samples;
  if (!PyArg_ParseTuple(args, "OOL", &call, &ret, &samples)) return NULL;
  Py_XSETREF(t->sample_call, Py_NewRef(call));
  Py_XSETREF(t->sample_return, Py_NewRef(ret));
  t->samples = samples;
  t->npending = 0;
  Py_RETURN_NONE;
}

static PyObject* Tracer_install(Tracer* t, PyObject* unused) {
  (void)unused;
  PyEval_SetProfile(Profile, (PyObject*)t);
  Py_RETURN_NONE;
}

/* As a Python-level profile function (threading.setprofile): installs the C callback on
 * the new thread, then handles the event that brought it here. */
static PyObject* Tracer_call(Tracer* t, PyObject* args, PyObject* kwargs) {
  PyObject *frame, *event, *arg;
  (void)kwargs;
  if (!PyArg_ParseTuple(args, "OOO", &frame, &event, &arg)) return NULL;
  PyEval_SetProfile(Profile, (PyObject*)t);
  if (PyFrame_Check(frame) && PyUnicode_Check(event) &&
      PyUnicode_CompareWithASCIIString(event, "call") == 0) {
    if (OnCall(t, (PyFrameObject*)frame) < 0) return NULL;
  }
  Py_RETURN_NONE;
}

/* {context: {(id(caller code) or None, id(callee code)): count}} for non-empty contexts;
 * clears them. Ids, not the code objects: code equality ignores the file. */
static PyObject* Tracer_take(Tracer* t, PyObject* unused) {
  (void)unused;
  PyObject* out = PyDict_New();
  if (!out) return NULL;
  for (size_t i = 0; i < t->ntables; ++i) {
    EdgeTable* e = &t->tables[i];
    int any = 0;
    for (size_t j = 0; j < e->cap && !any; ++j) any = e->slots[j].callee && e->slots[j].count;
    if (!any) continue;
    PyObject* edges = PyDict_New();
    if (!edges || PyDict_SetItem(out, e->name, edges) < 0) goto fail_edges;
    for (size_t j = 0; j < e->cap; ++j) {
      Edge* s = &e->slots[j];
      if (!s->callee || !s->count) continue;
      PyObject* caller = s->caller ? PyLong_FromVoidPtr(s->caller) : Py_NewRef(Py_None);
      PyObject* callee = PyLong_FromVoidPtr(s->callee);
      PyObject* key = (caller && callee) ? PyTuple_Pack(2, caller, callee) : NULL;
      PyObject* count = PyLong_FromLongLong(s->count);
      int rc = (key && count) ? PyDict_SetItem(edges, key, count) : -1;
      Py_XDECREF(caller);
      Py_XDECREF(callee);
      Py_XDECREF(key);
      Py_XDECREF(count);
      if (rc < 0) goto fail_edges;
      /* The edge keeps its slot: what it counted so far still decides its sampling. */
      s->before = s->before + s->count < t->samples ? s->before + s->count : t->samples;
      s->count = 0;
    }
    Py_DECREF(edges);
    continue;
  fail_edges:
    Py_XDECREF(edges);
    Py_DECREF(out);
    return NULL;
  }
  return out;
}

static int Tracer_init(Tracer* t, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"classify", "module_ids", "import_context", NULL};
  PyObject *classify, *module_ids, *import_context;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOU", kwlist, &classify, &module_ids,
                                   &import_context)) {
    return -1;
  }
  Py_INCREF(classify);
  Py_INCREF(module_ids);
  t->classify = classify;
  t->module_ids = module_ids;
  size_t i = TableFor(t, import_context);
  if (i == (size_t)-1) return -1;
  t->import_table = i;
  t->current = i;
  return 0;
}

static void Tracer_dealloc(Tracer* t) {
  for (size_t i = 0; i < t->codes.cap; ++i) Py_XDECREF(t->codes.keys[i]);
  PyMem_Free(t->codes.keys);
  PyMem_Free(t->codes.values);
  for (size_t i = 0; i < t->ntables; ++i) {
    Py_XDECREF(t->tables[i].name);
    PyMem_Free(t->tables[i].slots);
  }
  PyMem_Free(t->tables);
  Py_XDECREF(t->classify);
  Py_XDECREF(t->module_ids);
  Py_XDECREF(t->collecting);
  Py_XDECREF(t->sample_call);
  Py_XDECREF(t->sample_return);
  Py_TYPE(t)->tp_free((PyObject*)t);
}

static PyMethodDef Tracer_methods[] = {
    {"set_context", (PyCFunction)Tracer_set_context, METH_O, "Count edges in this context."},
    {"set_collecting", (PyCFunction)Tracer_set_collecting, METH_O,
     "The frame a running garbage collection interrupted (None: none): no caller below it."},
    {"set_sampler", (PyCFunction)Tracer_set_sampler, METH_VARARGS,
     "(sample_call, sample_return, samples): sample the first calls of each edge."},
    {"install", (PyCFunction)Tracer_install, METH_NOARGS, "Install on the current thread."},
    {"take", (PyCFunction)Tracer_take, METH_NOARGS, "Return and clear the edge counts."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TracerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_fbkit_accel.Tracer",
    .tp_basicsize = sizeof(Tracer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Tracer_init,
    .tp_dealloc = (destructor)Tracer_dealloc,
    .tp_call = (ternaryfunc)Tracer_call,
    .tp_methods = Tracer_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_fbkit_accel", .m_doc = "fbkit's tracing accelerator",
    .m_size = -1};

PyMODINIT_FUNC PyInit__fbkit_accel(void) {
  if (PyType_Ready(&TracerType) < 0) return NULL;
  PyObject* m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&TracerType);
  if (PyModule_AddObject(m, "Tracer", (PyObject*)&TracerType) < 0) {
    Py_DECREF(&TracerType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
