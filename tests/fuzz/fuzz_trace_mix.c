/* fuzz_trace_mix.c — see fuzz_traces.h. */
#define TRACE_TARGET 2
#include "fuzz_traces.h"
