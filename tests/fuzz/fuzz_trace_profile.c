/* fuzz_trace_profile.c — see fuzz_traces.h. */
#define TRACE_TARGET 3
#include "fuzz_traces.h"
