/* fuzz_trace_bw.c — see fuzz_traces.h. */
#define TRACE_TARGET 0
#include "fuzz_traces.h"
