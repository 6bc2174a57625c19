"""geotrain.py - GeoTrain from Python through its C library (ctypes only).

    import geotrain
    r = geotrain.simulate("topologies/yuan2022/case5.json", "gpt3-xl",
                          "topologies/plans/case5-rank-order.plan.json", batch=1024)
    print(r["iteration_s"])
    p = geotrain.plan("topologies/yuan2022/case5.json", "gpt3-xl", planner="greedy")

Both return the library's JSON result as a dict (simulate: the document of
`geotrain simulate --json`; plan: planner, objective, gpus, iteration_s,
energy_j, plan, ...) and raise geotrain.Error with the library's one-line
message on bad input. No pip install: the module loads libgeotrain.so from
$GEOTRAIN_LIB, else the build tree beside this file (build-pic/, `make shared`),
else the system's (`make install`). Catalogs: $GEOTRAIN_DATA, defaulting to
the topologies/ folder beside this file when it exists.
"""
import ctypes
import ctypes.util
import json
import os

__all__ = ["simulate", "plan", "version", "Error"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)


class Error(Exception):
    """A GeoTrain error: .status is the library's code, str() its message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _Job(ctypes.Structure):
    # mirrors struct geotrain_job in api/geotrain.h
    _fields_ = [
        ("topology", ctypes.c_char_p),
        ("model", ctypes.c_char_p),
        ("batch", ctypes.c_long),
        ("microbatch", ctypes.c_long),
        ("seq", ctypes.c_long),
        ("recompute", ctypes.c_int),
        ("iterations", ctypes.c_long),
        ("seed", ctypes.c_ulonglong),
        ("profile", ctypes.c_char_p),
    ]


def _find_library():
    env = os.environ.get("GEOTRAIN_LIB")
    if env:
        return env
    local = os.path.join(_ROOT, "build-pic", "libgeotrain.so.0")
    if os.path.exists(local):
        return local
    found = ctypes.util.find_library("geotrain")
    if found:
        return found
    raise OSError("libgeotrain.so not found: set GEOTRAIN_LIB, run `make shared` "
                  "in the repository or `make install`")


_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    if "GEOTRAIN_DATA" not in os.environ and os.path.exists(
            os.path.join(_ROOT, "topologies", "models.csv")):
        os.environ["GEOTRAIN_DATA"] = os.path.join(_ROOT, "topologies")
    lib = ctypes.CDLL(_find_library())
    res = ctypes.c_void_p
    lib.geotrain_version.restype = ctypes.c_char_p
    lib.geotrain_simulate.argtypes = [ctypes.POINTER(_Job), ctypes.c_char_p,
                                      ctypes.POINTER(res)]
    lib.geotrain_plan.argtypes = [ctypes.POINTER(_Job), ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.c_double, ctypes.c_char_p, ctypes.POINTER(res)]
    lib.geotrain_result_status.argtypes = [res]
    lib.geotrain_result_error.argtypes = [res]
    lib.geotrain_result_error.restype = ctypes.c_char_p
    lib.geotrain_result_json.argtypes = [res]
    lib.geotrain_result_json.restype = ctypes.c_char_p
    lib.geotrain_result_free.argtypes = [res]
    _lib = lib
    return lib


def _b(s):
    return None if s is None else os.fsencode(s)


def _job(topology, model, batch, microbatch, seq, recompute, iterations, seed, profile):
    if recompute not in ("none", "full"):
        raise ValueError("recompute must be 'none' or 'full'")
    return _Job(_b(topology), _b(model), batch or 0, microbatch or 0, seq or 0,
                1 if recompute == "full" else 0, iterations or 0, seed or 0, _b(profile))


def _take(status, res):
    lib = _load()
    try:
        if not res:
            raise Error(status, "geotrain: out of memory")
        if status != 0:
            raise Error(status, lib.geotrain_result_error(res).decode())
        return json.loads(lib.geotrain_result_json(res).decode())
    finally:
        if res:
            lib.geotrain_result_free(res)


def version():
    """The library's version string."""
    return _load().geotrain_version().decode()


def simulate(topology, model, plan_path, batch=None, microbatch=None, seq=None,
             recompute="none", iterations=None, seed=None, profile=None):
    """Replay plan_path on the job; the dict of `geotrain simulate --json`."""
    lib = _load()
    job = _job(topology, model, batch, microbatch, seq, recompute, iterations, seed, profile)
    res = ctypes.c_void_p()
    status = lib.geotrain_simulate(ctypes.byref(job), _b(plan_path), ctypes.byref(res))
    return _take(status, res)


def plan(topology, model, planner="memetic", objective="time", budget_s=0.0, out=None,
         batch=None, microbatch=None, seq=None, recompute="none", iterations=None,
         seed=None, profile=None):
    """Plan the job and replay the plan; with out, the plan file is written there."""
    lib = _load()
    job = _job(topology, model, batch, microbatch, seq, recompute, iterations, seed, profile)
    res = ctypes.c_void_p()
    status = lib.geotrain_plan(ctypes.byref(job), _b(planner), _b(objective),
                               float(budget_s), _b(out), ctypes.byref(res))
    return _take(status, res)
