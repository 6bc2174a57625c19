/* fuzz_trace_avail.c — see fuzz_traces.h. */
#define TRACE_TARGET 1
#include "fuzz_traces.h"
