"""fbkit's tracing agent, core (no pytest import: child processes use it too). fbkit_agent
is the pytest plugin around it. Together they record, per test file, which repository
functions call which, and every test's outcome, into a JSON-lines journal.

Loaded by `fb-graph trace` (through fbkit_boot.py) from a private directory; configured by
environment variables (FBKIT_TRACE_ROOT, FBKIT_TRACE_JOURNAL, FBKIT_TRACE_EXCLUDE,
FBKIT_TRACE_ACCEL). It must not change what tests see: it emits no warnings, wraps no
frames, and keeps its own state out of the tests' way.

Journal records (one JSON object per line; keys sorted):
  start      {pid, python, accelerated, accel_error, preloaded: [repo files imported before]}
  collect    {file, error, category}     one per test module, when pytest reports it
  selected   {files: [[file, [nodeids in run order]], ...]}   after deselection
  begin      {file}                      the tests of `file` start now (flushed at once)
  uses       {file, context}             a file uses a session/package fixture context
  report     {nodeid, file, when, outcome, category, duration, message}  pytest's reports
             (setups and teardowns that passed are left out)
  edges      {context, codes: [[path, firstlineno, name]...], edges: [[caller, callee, n]...],
              types: [[code, {parameter: [type names]}, [return type names]]...]}
             caller/callee index `codes`; caller -1 means "entered from outside the repo";
             `types` (only when any were observed): the types of the arguments and results
             of sampled calls (see Recorder.sample_call), names sorted
  warning    {nodeid, message}
  finish     {exitstatus}
Contexts: a test file's root-relative path (its tests); "<collect>FILE" (its import by
pytest); "<import>" for module-level code of non-test modules (attributed later through the
static import closure); "<fixture>BASEID::NAME" for session- and package-scoped fixture
setup (attributed to the files that use it); "<session>" for anything else.
"""

import builtins
import dis
import gc
import json
import os
import sys
import threading
import time
from hmac import new as _hmac_new

IMPORT_CONTEXT = "<import>"
SESSION_CONTEXT = "<session>"

_SKIP_SEGMENTS = ("/site-packages/", "/dist-packages/")

# Calls per (caller, callee) edge and flush whose argument and result types are sampled, and
# the most type names kept per parameter (or result) of one code object and context.
TYPE_SAMPLES = 4
TYPE_NAMES_CAP = 8
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
_CO_SUSPENDING = 0x20 | 0x80 | 0x200  # generator, coroutine, async generator


def type_name(value):
    """The name of a value's type: "int", "collections.OrderedDict", "pkg.mod.Cache"."""
    t = type(value)
    try:
        module, name = t.__module__, t.__qualname__
    except Exception:  # a metaclass that hides them
        return "object"
    if not isinstance(module, str) or not isinstance(name, str):
        return "object"
    return name if module == "builtins" else module + "." + name


_RETURN_OPS = frozenset(dis.opmap[n] for n in ("RETURN_VALUE", "RETURN_CONST") if n in dis.opmap)


def _returned(frame):
    """Whether a frame at its "return" event stopped at a return instruction (else it is
    being left by an exception)."""
    try:
        return frame.f_code.co_code[frame.f_lasti] in _RETURN_OPS
    except Exception:
        return False


def _add_capped(names, name):
    if len(names) < TYPE_NAMES_CAP:
        names.add(name)


def env_list(name):
    value = os.environ.get(name, "")
    return [p for p in value.split(os.pathsep) if p]


class Recorder:
    """Counts call edges between repository code objects, per context.

    `profile` is the sys.setprofile callback. A callee counts when its file is under the
    root; its caller is the nearest frame whose file is under the root (None when the call
    came from outside, e.g. pytest calling a test, or from the garbage collector: a finalizer
    or a generator it closes runs on top of whichever frame happened to trigger the
    collection, which depends on allocation counts, not on the code; the finalizer's own
    calls have it as their caller). Code objects are keyed by identity (id,
    with a reference kept so ids stay unique): CPython's code equality ignores the file, so
    equal functions in two files would otherwise be taken for one."""

    def __init__(self, root, excludes=(), accel=None, track_imports=True):
        self.root = os.path.realpath(root)
        # False in child processes: their import time belongs to the test that started them.
        self.track_imports = track_imports
        self.prefix = self.root.rstrip("/") + "/"
        self.excludes = [os.path.realpath(e).rstrip("/") + "/" for e in excludes]
        self.cwd = os.getcwd()
        self._info = {}  # id(code) -> (path, firstlineno, name), or None outside the repo
        self._rel = {}  # co_filename -> relpath(co_filename): many codes share a file
        self._keep = []  # the code objects behind those ids
        self._module_ids = set()  # ids of <module> codes of non-test repo modules
        self.test_files = set()
        self.import_depth = 0
        self.collecting = None  # the frame a running garbage collection interrupted
        self.contexts = {}  # context -> {(caller id or None, callee id): count}
        self.context = SESSION_CONTEXT
        self._edges = self.contexts.setdefault(self.context, {})
        self._import_edges = self.contexts.setdefault(IMPORT_CONTEXT, {})
        # context -> {code id: ({parameter: {type names}}, {return type names})}
        self.types = {}
        self._pending = {}  # id(frame) of a sampled call -> its return type names
        # context -> {edge: calls counted before the last take, up to TYPE_SAMPLES}: the
        # samples are the first calls of each edge in a context, however often it is taken.
        self._before = {}
        self._before_now = {}
        # The C accelerator (same semantics as `profile`), or None.
        self.tracer = None
        if accel is not None:
            self.tracer = accel.Tracer(self.classify, self._module_ids, IMPORT_CONTEXT)
            if hasattr(self.tracer, "set_sampler"):
                self.tracer.set_sampler(self.sample_call, self.sample_return, TYPE_SAMPLES)
            self.tracer.set_context(self.context)

    # -- classification -------------------------------------------------------------
    def relpath(self, filename):
        """The root-relative path of a code's file, or None when it is not repository code."""
        if not filename or filename.startswith("<"):
            return None
        if not os.path.isabs(filename):
            filename = os.path.join(self.cwd, filename)
        real = os.path.realpath(filename)
        if not real.startswith(self.prefix):
            return None
        rel = real[len(self.prefix):]
        if any(seg in "/" + rel for seg in _SKIP_SEGMENTS):
            return None
        if any(real.startswith(e) for e in self.excludes):
            return None
        return rel

    def classify(self, code):
        """The identity of a code object, or None when it is not repository code."""
        key = id(code)
        info = self._info.get(key, False)
        if info is not False:
            return info
        filename = code.co_filename
        rel = self._rel.get(filename, False)
        if rel is False:
            rel = self._rel[filename] = self.relpath(filename)
        info = None if rel is None else (rel, code.co_firstlineno, code.co_name)
        self._info[key] = info
        self._keep.append(code)
        if (self.track_imports and info is not None and code.co_name == "<module>"
                and rel not in self.test_files):
            self._module_ids.add(key)
        return info

    def identity(self, code_id):
        return self._info[code_id]

    # -- the callback -----------------------------------------------------------------
    def profile(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            key = id(code)
            info = self._info.get(key, False)
            if info is False:
                info = self.classify(code)
            if info is None:
                return
            caller = frame.f_back
            while caller is not None:
                if caller is self.collecting:
                    caller = None
                    break
                ckey = id(caller.f_code)
                cinfo = self._info.get(ckey, False)
                if cinfo is False:
                    cinfo = self.classify(caller.f_code)
                if cinfo is not None:
                    break
                caller = caller.f_back
            edge = (None if caller is None else ckey, key)
            if key in self._module_ids:
                self.import_depth += 1
            if self.import_depth:
                edges = self._import_edges
                edges[edge] = edges.get(edge, 0) + 1
            else:
                n = self._edges[edge] = self._edges.get(edge, 0) + 1
                if n <= TYPE_SAMPLES and n + self._before_now.get(edge, 0) <= TYPE_SAMPLES:
                    self.sample_call(frame)
        elif event == "return":
            if self._pending:
                self.sample_return(frame, arg)
            if self.import_depth and id(frame.f_code) in self._module_ids:
                self.import_depth -= 1

    # -- observed types ---------------------------------------------------------------
    def sample_call(self, frame):
        """Records the types of a repository call's arguments (by parameter name; `self` and
        `cls` left out; *args and **kwargs by their elements) in the current context; returns
        whether its result is awaited (not for generators and coroutines, whose "return"
        events are suspensions). Called for the first TYPE_SAMPLES calls of each edge in each
        context, outside import time: cheap by construction, and the same calls however the
        flushes fall."""
        code = frame.f_code
        key = id(code)
        if key in self._module_ids or code.co_name == "<module>":
            return False
        # Never a generator's or coroutine's locals: each resumption is a call event, and the
        # snapshot would keep what it holds then alive (more-itertools' test_early_free).
        if code.co_flags & _CO_SUSPENDING:
            return False
        table = self.types.get(self.context)
        if table is None:
            table = self.types[self.context] = {}
        entry = table.get(key)
        if entry is None:
            entry = table[key] = ({}, set())
        params = entry[0]
        flags = code.co_flags
        n = code.co_argcount + code.co_kwonlyargcount
        names = code.co_varnames[:n]
        local = None
        try:
            local = frame.f_locals
            for name in names:
                if name in ("self", "cls") or name not in local:
                    continue
                _add_capped(params.setdefault(name, set()), type_name(local[name]))
            extra = n
            if flags & _CO_VARARGS:
                name = code.co_varnames[extra]
                extra += 1
                for v in local.get(name, ())[:TYPE_NAMES_CAP]:
                    _add_capped(params.setdefault("*" + name, set()), type_name(v))
            if flags & _CO_VARKEYWORDS:
                name = code.co_varnames[extra]
                kwargs = local.get(name) or {}
                for v in list(kwargs.values())[:TYPE_NAMES_CAP]:
                    _add_capped(params.setdefault("**" + name, set()), type_name(v))
        except Exception:  # a frame whose locals cannot be read: nothing recorded
            pass
        # Before 3.13, reading f_locals leaves a snapshot dict on the frame that holds the
        # arguments as they were until the frame ends (an argument rebound or deleted would
        # stay alive): emptied at once under the accelerator, where nothing copies it back.
        # (The pure-Python hook's own trampoline snapshots and writes back every event; from
        # 3.13 f_locals is a write-through proxy, never to be cleared.)
        if self.tracer is not None and type(local) is dict:
            local.clear()
        self._pending[id(frame)] = entry[1]
        return True

    def sample_return(self, frame, value, raised=False):
        """A sampled call returned `value` (raised: it raised instead; nothing recorded). The
        Python profile hook says None for both a `return None` and a raise: the instruction
        the frame stopped at tells them apart."""
        returns = self._pending.pop(id(frame), None)
        if returns is None or raised:
            return
        if value is None and self.tracer is None and not _returned(frame):
            return
        _add_capped(returns, type_name(value))

    def take_types(self, keep=None):
        """Returns and clears the types observed so far: {context: {code id: (params,
        returns)}}; but those of context `keep`, which stay to be taken with the rest of its
        run: the cap of names per parameter then holds over the whole context, whenever the
        agent flushes (the names kept do not depend on how the flushes fall)."""
        kept = self.types.pop(keep, None) if keep is not None else None
        taken, self.types = self.types, ({keep: kept} if kept is not None else {})
        return taken

    # -- the garbage collector --------------------------------------------------------
    def on_gc(self, phase, info):
        """gc.callbacks hook: from start to stop, the frame the collection interrupted ends
        the search for a caller."""
        try:
            self.collecting = sys._getframe(1) if phase == "start" else None
        except ValueError:  # a collection with no Python frame running (at shutdown)
            self.collecting = None
        if self.tracer is not None:
            self.tracer.set_collecting(self.collecting)

    def watch_collections(self):
        if self.on_gc not in gc.callbacks:
            gc.callbacks.append(self.on_gc)

    def unwatch_collections(self):
        if self.on_gc in gc.callbacks:
            gc.callbacks.remove(self.on_gc)
        self.on_gc("stop", None)

    # -- contexts ---------------------------------------------------------------------
    def set_context(self, context):
        self.context = context
        self._edges = self.contexts.setdefault(context, {})
        self._before_now = self._before.setdefault(context, {})
        if self.tracer is not None:
            self.tracer.set_context(context)

    def take(self):
        """Returns and clears everything recorded so far:
        {context: {(caller id or None, callee id): count}}."""
        taken = {c: e for c, e in self.contexts.items() if e}
        for context, edges in taken.items():
            before = self._before.setdefault(context, {})
            for key, n in edges.items():
                p = before.get(key, 0)
                if p < TYPE_SAMPLES:
                    before[key] = min(TYPE_SAMPLES, p + n)
        self._before_now = self._before.setdefault(self.context, {})
        if self.tracer is not None:
            for context, edges in self.tracer.take().items():
                merged = taken.setdefault(context, {})
                for key, n in edges.items():
                    merged[key] = merged.get(key, 0) + n
        self.contexts = {}
        self._edges = self.contexts.setdefault(self.context, {})
        self._import_edges = self.contexts.setdefault(IMPORT_CONTEXT, {})
        return taken

    def serialise(self, context, edges, types=None):
        """One journal record for a context's edges (and the types observed in it), with its
        own table of code identities."""
        index = {}
        codes = []

        def ref(code_id):
            if code_id is None:
                return -1
            i = index.get(code_id)
            if i is None:
                i = index[code_id] = len(codes)
                codes.append(list(self._info[code_id]))
            return i

        rows = sorted([ref(a), ref(b), n] for (a, b), n in edges.items())
        record = {"type": "edges", "context": context, "codes": codes, "edges": rows}
        if types:
            record["types"] = sorted(
                [ref(key), {p: sorted(t) for p, t in params.items()}, sorted(returns)]
                for key, (params, returns) in types.items() if key in self._info)
        return record


# Records that decide a verdict (which tests ran, how each ended, that the session ended,
# whether the checks were on): once the writer is armed, only fbkit's hooks under pytest's
# own session may have them signed. Every other record (a finding, a warning, what a test called) any caller may write.
VERDICTS = frozenset(("begin", "checked", "collect", "finish", "report", "selected", "start",
                      "test"))


def _signer(key, writer_code):
    """The session's signer, a generator: its frame alone holds the key (in OpenSSL's HMAC
    object, whose type no code can change) and the record count, reachable only through
    gi_frame or gc.get_referents (both reported as escape attempts); an exception thrown in
    is swallowed without its traceback. It answers only Journal.write (its caller's code, by
    identity) with the signed line, or None, and serialises with json's C encoder: nothing
    it uses is looked up at call time (a module global, a class's method, a builtin).

    Once armed ("arm", main thread, bottom frame, trusted code, extender, writers, machinery,
    stdlib), a verdict record is signed only when Journal.write's caller is that record's own
    writer in fbkit (the hook or method that writes it, by code identity), called by what
    calls it (pluggy's hook machinery, or the hook that calls the method), the machinery
    called by other code than the standard library's, and every frame from there down to
    the session's bottom frame on pytest's thread runs code it was armed with (by identity,
    in its own module's globals); anything else gets an integrity record in its place."""
    mac = _hmac_sealed(key)
    del key
    encode = _encoder()
    getframe, get_ident, verdicts, join = sys._getframe, threading.get_ident, VERDICTS, "".join
    kind, plain_dict, plain_str, plain_tuple, size = type, dict, str, tuple, len
    plain_list, plain_int, plain_float, plain_bool, items = list, int, float, bool, dict.items
    id = builtins.id  # noqa: A001 (bound here: a replaced builtin would run inside this frame)
    scrub, base_error, closing = BaseException.with_traceback, BaseException, GeneratorExit
    main = bottom = extender = None
    trusted = None  # id(code) -> (code, the globals it runs in)
    machinery = stdlib = {}  # id(code) -> code: pluggy's and fbkit's; the standard library's
    writers = {}  # record type -> {id(code): code} of the fbkit functions that write it
    extended = False
    refused = {}  # integrity messages already written
    seq = 0

    verified = {}  # id(frame) -> frame: frames of stacks already signed for (to the bottom)

    def plain(value, depth):
        """Whether `value` is JSON of exact builtin types only: the C encoder then calls no
        Python code (a dict subclass's items(), a str subclass's comparisons) while this
        frame, which holds the key, is on the stack."""
        t = kind(value)
        if value is None or t is plain_str or t is plain_int or t is plain_float or t is plain_bool:
            return True
        if depth > 16:
            return False
        if t is plain_dict:
            for k, v in items(value):
                if kind(k) is not plain_str or not plain(v, depth + 1):
                    return False
            return True
        if t is plain_list or t is plain_tuple:
            for v in value:
                if not plain(v, depth + 1):
                    return False
            return True
        return False

    def refusal(frame, what):
        """Why a verdict record asked for from `frame` is not signed, or None."""
        if get_ident() != main:
            return "from a thread other than pytest's"
        own, callers = writers.get(what, (None, None))
        code = frame.f_code if frame is not None else None
        if own is None or own.get(id(code)) is not code:
            return "from %s (%s), not the plugin's writer of that record" % (
                (code.co_filename, code.co_name) if code is not None else ("nowhere", "-"))
        up = frame.f_back.f_code if frame.f_back is not None else None
        if callers.get(id(up)) is not up:
            return "from %s called by %s, not by pytest's hook machinery" % (
                code.co_name, "%s (%s)" % (up.co_filename, up.co_name) if up is not None else "nothing")
        # Who called the hook machinery: pytest's or a plugin's code, never the standard
        # library's (a callback of the interpreter's, driving the hooks with its own arguments).
        up = frame.f_back
        while up is not None and machinery.get(id(up.f_code)) is up.f_code:
            up = up.f_back
        if up is not None and stdlib.get(id(up.f_code)) is up.f_code:
            return "from %s, its hooks called by the standard library's %s (%s)" % (
                code.co_name, up.f_code.co_filename, up.f_code.co_name)
        chain, last = [], None
        while frame is not None:
            if verified.get(id(frame)) is frame:
                break  # the rest of this stack was checked for an earlier record
            code = frame.f_code
            entry = trusted.get(id(code))
            if entry is None or entry[0] is not code or entry[1] is not frame.f_globals:
                return "from %s:%s (%s), code fbkit's session did not start with" % (
                    code.co_filename, frame.f_lineno, code.co_name)
            chain.append(frame)
            last, frame = frame, frame.f_back
        else:
            if last is not bottom:
                return "outside pytest's session"
        if size(verified) > 512:
            verified.clear()  # bounded: frames of calls that ended are let go
        for f in chain:
            verified[id(f)] = f
        return None

    answer = None
    while True:
        try:
            message = yield answer
        except closing as e:  # close(): the signer ends (its frame cleared)
            scrub(e, None)
            return
        except base_error as e:  # throw(): swallowed, its traceback (this frame) dropped
            scrub(e, None)
            answer = None
            continue
        answer = None
        try:
            caller = getframe(1)
            if caller.f_code is not writer_code:
                continue
            if kind(message) is plain_tuple and size(message) >= 2:
                if kind(message[0]) is not plain_str:
                    continue
                if message[0] == "arm" and trusted is None and size(message) == 8:
                    main, bottom, trusted, extender = message[1], message[2], plain_dict(message[3]), message[4]
                    writers = {t: (plain_dict(codes[0]), plain_dict(codes[1]))
                               for t, codes in plain_dict(message[5]).items()}
                    machinery, stdlib = plain_dict(message[6]), plain_dict(message[7])
                elif (message[0] == "extend" and trusted is not None and not extended
                        and caller.f_back is not None and caller.f_back.f_code is extender):
                    extended = True
                    for k, v in plain_dict(message[1]).items():
                        trusted.setdefault(k, v)
                continue
            if kind(message) is not plain_dict:
                continue
            record = message
            what = record.get("type")
            why = None
            if not plain(record, 0):
                why = ("a %s record holding values of other types than JSON's own was asked of "
                       "fbkit's journal writer: not written" % (what if kind(what) is plain_str else "forged"))
            elif trusted is not None and (kind(what) is not plain_str or what in verdicts):
                why = refusal(caller.f_back, what if kind(what) is plain_str else None)
                if why is not None:
                    why = ("a %s record was asked of fbkit's journal writer %s: not written"
                           % (what if kind(what) is plain_str else "forged", why))
            if why is not None:
                if why in refused or size(refused) > 64:
                    continue  # said once (and a flood not at all)
                refused[why] = True
                record = {"type": "integrity", "message": why}
            seq += 1
            text = join(encode(plain_dict(record, seq=seq), 0))
            sign = mac.copy()
            sign.update(text.encode("utf-8", "replace"))
            answer = text + "\t" + sign.hexdigest()
        except base_error as e:  # a record that cannot be written is lost, never the writer
            scrub(e, None)
            answer = None


def _hmac_sealed(key):
    """HMAC-SHA256 keyed with `key` in OpenSSL's object (its type immutable, its key out of
    Python's reach), or the stdlib's when the interpreter has no _hashlib."""
    try:
        from _hashlib import hmac_new
        return hmac_new(key, digestmod="sha256")
    except ImportError:
        return _hmac_new(key, digestmod="sha256")


def _encoder():
    """json.dumps(record, sort_keys=True, ensure_ascii=False) as json's C encoder makes it,
    bound now: (record, 0) -> chunks."""
    from json.encoder import c_encode_basestring, c_make_encoder

    def refuse(value):
        raise TypeError("not JSON: %s" % type(value).__name__)
    if c_make_encoder is None or c_encode_basestring is None:
        encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
        return lambda record, level, _i=encoder.iterencode: list(_i(record))
    return c_make_encoder(None, refuse, c_encode_basestring, None, ": ", ", ", True, False, True)


_pending_signer = []  # the signer fbkit_boot.py sealed, until the session's journal takes it


def seal_key(key):
    """Seals the session's key (bytes, read by fbkit_boot.py from the descriptor fbkit
    handed it, before any repository code ran) into a signer for the journal to take."""
    signer = _signer(key, Journal.write.__code__)
    next(signer)
    _pending_signer[:] = [signer]


def _take_signer():
    signer = _pending_signer[0] if _pending_signer else None
    _pending_signer[:] = []
    return signer


class Journal:
    """Appends JSON lines to the journal file. Records are buffered and reach the file on
    flush() (the agent flushes at least every quarter second between tests, and at once for
    records the runner waits for), so a crash loses little and the per-test cost stays low.
    With a signer (seal_key), each record carries its number (`seq`, from 1) and the line
    ends with a TAB and the HMAC-SHA256 of the JSON text: fbkit takes only records signed in
    order. A tuple is a message for the signer (arm, extend), written as nothing."""

    def __init__(self, path, signer=None):
        # errors="replace": a lone surrogate in a message must not break the run. "fd:N":
        # the descriptor fbkit opened for this process (no path the tests could replace).
        target = int(path[3:]) if path.startswith("fd:") else path
        self._file = open(target, "a", encoding="utf-8", errors="replace")
        self._lock = threading.Lock()
        self._pending = []
        self._signer = signer

    def write(self, record, flush=False):
        with self._lock:
            if self._signer is not None:
                line = self._signer.send(record)
                if line is None:
                    return
            elif type(record) is tuple:
                return
            else:
                line = json.dumps(record, sort_keys=True, ensure_ascii=False)
            self._pending.append(line + "\n")
            if flush:
                self._flush_locked()

    def flush(self):
        with self._lock:
            self._flush_locked()

    def _flush_locked(self):
        if self._pending:
            self._file.write("".join(self._pending))
            self._pending = []
            self._file.flush()

    def close(self):
        self.flush()
        self._file.close()


def load_accelerator(path):
    """The compiled _fbkit_accel module at `path`, or (None, reason)."""
    if not path:
        return None, "not requested"
    try:
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.ExtensionFileLoader("_fbkit_accel", path)
        spec = importlib.util.spec_from_file_location("_fbkit_accel", path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module, None
    except Exception as e:  # any failure means the pure-Python fallback
        return None, "%s: %s" % (type(e).__name__, e)


class Agent:
    def __init__(self, root, journal_path, excludes=(), accel_path=None, track_imports=True):
        accel, self.accel_error = load_accelerator(accel_path)
        self.recorder = Recorder(root, excludes, accel, track_imports)
        self.journal = Journal(journal_path, _take_signer() if journal_path.startswith("fd:") else None)
        tracer = self.recorder.tracer
        self.profile = tracer if tracer is not None else self.recorder.profile
        self.accelerated = tracer is not None
        self.current_file = None  # the file whose context is being recorded
        self.running_file = None  # the file whose tests run now
        self.last_flush = 0.0
        self.file_of = {}  # nodeid -> test file
        self.fixtures_of = {}  # test file -> fixture contexts it uses
        self._fixtures_noted = set()
        self._fixture_infos = []
        self.config = None
        # FBKIT_TRACE_RECORD=0: outcomes only (verification runs), no profile hook at all.
        self.recording = os.environ.get("FBKIT_TRACE_RECORD", "1") != "0"

    def start(self, preloaded):
        self.journal.write({"type": "start", "pid": os.getpid(), "python": sys.version,
                            "accelerated": self.accelerated, "accel_error": self.accel_error,
                            "preloaded": sorted(preloaded),
                            "checks": os.environ.get("FBKIT_TRACE_CHECKS") == "1"})
        if not self.recording:
            return
        self.recorder.watch_collections()
        threading.setprofile(self.profile)
        self.install()

    def install(self):
        if not self.recording:
            return
        if self.recorder.tracer is not None:
            self.recorder.tracer.install()
        else:
            sys.setprofile(self.profile)

    def stop(self):
        sys.setprofile(None)
        threading.setprofile(None)
        self.recorder.unwatch_collections()

    def flush(self, keep_current_types=False):
        """Writes what was recorded; the current context's observed types only when it ends
        (`keep_current_types` on a flush in its middle: Recorder.take_types)."""
        types = self.recorder.take_types(self.recorder.context if keep_current_types else None)
        edges = self.recorder.take()
        for context in sorted(set(edges) | set(types)):
            self.journal.write(self.recorder.serialise(context, edges.get(context, {}),
                                                       types.get(context)))

    def enter_context(self, context, rel=None):
        """Records into `context` from now on; `rel` is the test file it belongs to."""
        if context != self.recorder.context:
            self.flush()
            self.current_file = rel
            self.recorder.set_context(context)
            os.environ["FBKIT_TRACE_CONTEXT"] = rel if rel is not None else context

    def enter_file(self, rel):
        """Tests of `rel` run now: its context, and a "begin" record (the runner times each
        file by these and knows which one was running if the interpreter dies)."""
        self.enter_context(rel if rel is not None else SESSION_CONTEXT, rel)
        if rel is None:
            self.running_file = None
        elif rel != self.running_file:
            self.running_file = rel
            self.journal.write({"type": "begin", "file": rel}, flush=True)

    def flush_now_and_then(self, seconds=0.25):
        """Flushes after a test when the last flush is `seconds` old: a crash later in the
        file then loses little of what its earlier tests recorded."""
        now = time.monotonic()
        if now - self.last_flush >= seconds:
            self.flush(keep_current_types=True)
            self.journal.flush()
            self.last_flush = time.monotonic()

    def note_fixtures(self, item, rel):
        """Records the session/package-scoped fixture contexts a test file uses."""
        info = getattr(item, "_fixtureinfo", None)
        seen = (rel, id(info))  # parametrised tests share their function's fixture info
        if seen in self._fixtures_noted:
            return
        self._fixtures_noted.add(seen)
        self._fixture_infos.append(info)  # keeps id(info) unique
        used = self.fixtures_of.setdefault(rel, set())
        for defs in (info.name2fixturedefs.values() if info else ()):
            fixturedef = defs[-1] if defs else None
            if fixturedef is not None and fixturedef.scope in ("session", "package"):
                context = fixture_context(fixturedef)
                if context not in used:
                    used.add(context)
                    self.journal.write({"type": "uses", "file": rel, "context": context})

    def ensure_installed(self, nodeid):
        """Restores the agent's hook if a test replaced it, and says so in the journal."""
        if self.recording and sys.getprofile() is not self.profile:
            self.journal.write({"type": "warning", "nodeid": nodeid,
                                "message": "the test replaced the profile function; "
                                           "fbkit's was restored and calls made meanwhile "
                                           "are not recorded"})
            self.install()


def collect_context(rel):
    """The context of a test module's collection (its import): kept apart from its tests'
    so that a session resumed after a crash, which collects the file again, does not count
    the same import twice."""
    return "<collect>" + rel


def fixture_context(fixturedef):
    """The recording context of a session- or package-scoped fixture's setup."""
    return "<fixture>%s::%s" % (fixturedef.baseid, fixturedef.argname)


def preloaded(recorder):
    """Repository files already imported (before the agent could start)."""
    out = set()
    for module in list(sys.modules.values()):
        rel = recorder.relpath(getattr(module, "__file__", None) or "")
        if rel is not None:
            out.add(rel)
    return out


def start_child():
    """Records a Python child process of a traced test into its own journal, in the context
    its parent was in when it started it (FBKIT_TRACE_CONTEXT). Edges are written at exit;
    a child that ends with os._exit loses them."""
    child_dir = os.environ.get("FBKIT_TRACE_CHILD_DIR")
    root = os.environ.get("FBKIT_TRACE_ROOT")
    if not child_dir or not root:
        return None
    os.makedirs(child_dir, exist_ok=True)
    journal = os.path.join(child_dir, "child-%d.jsonl" % os.getpid())
    agent = Agent(root, journal, env_list("FBKIT_TRACE_EXCLUDE"),
                  os.environ.get("FBKIT_TRACE_ACCEL"), track_imports=False)
    agent.recorder.set_context(os.environ.get("FBKIT_TRACE_CONTEXT", SESSION_CONTEXT))
    agent.start(preloaded(agent.recorder))

    def finish():
        agent.stop()
        agent.flush()
        agent.journal.close()

    import atexit
    atexit.register(finish)
    return agent
