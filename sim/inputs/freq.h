/* freq.h — the SM-frequency model of a GPU type (docs/energy-model.md).
 *
 * Loaded from topologies/gpu_freq.csv (next to gpus.csv; derived by
 * topologies/derive/derive_gpu_freq.py from the Perseus SOSP'24 per-stage
 * profiles, each row naming its source and its fit error). For a locked SM
 * clock f in [f_min, f_max] (steps of step_mhz):
 *   time   t(f) = t(f_max) * (alpha + (1 - alpha) * f_max / f)
 *   power  P(f) = tdp_w * (p_static + (1 - p_static) * (f / f_max)^p_exp)
 * alpha is the share of an op that does not speed up with the clock (memory
 * bound), p_static the clock-independent share of compute power. comm_w is
 * the power of a GPU blocked on a P2P transfer (measured by Perseus). A clock
 * of 0 means "the maximum clock": every function then returns exactly the
 * figure of the model without frequencies. */
#ifndef GT_FREQ_H
#define GT_FREQ_H

#include <stddef.h>
#include <stdint.h>
#include "sim/base/error.h"

struct gpu_type;
struct gpu_catalog;

typedef struct gpu_freq {
    int known;                 /* the type has a row in gpu_freq.csv */
    int transfer;              /* the row is a transfer from another architecture */
    int f_min_mhz, f_max_mhz, step_mhz;
    double alpha, p_static, p_exp;
    double comm_w;             /* P2P-blocking power, W (idle_w <= comm_w <= tdp_w) */
    double t_err_max, p_err_max;  /* largest relative fit error on the measured points */
} gpu_freq;

/* Read the frequency catalog `path` into the matching types of c. A missing
 * file is not an error (no type then has a frequency model); rows of types
 * the catalog does not hold are skipped. */
int freq_catalog_attach(struct gpu_catalog *c, const char *path, gt_err *e);
/* The same with gpu_freq.csv in the folder of the GPU catalog `gpus_path`. */
int freq_catalog_attach_beside(struct gpu_catalog *c, const char *gpus_path, gt_err *e);

/* Is f a clock of g's grid? 0 = yes; otherwise -1 and `why` says what is allowed. */
int freq_check(const struct gpu_type *g, int f_mhz, char *why, size_t n);
/* Is f the maximum clock (0 or f_max)? */
int freq_is_max(const struct gpu_type *g, int f_mhz);
/* t(f) / t(f_max) and P(f) / P(f_max); 1 at the maximum clock. */
double freq_time_ratio(const struct gpu_type *g, int f_mhz);
double freq_power_ratio(const struct gpu_type *g, int f_mhz);
/* An op lasting ns at f_max, run at f (ns itself at the maximum clock). */
int64_t freq_op_ns(const struct gpu_type *g, int64_t ns, int f_mhz);
/* Compute power at f (tdp_w exactly at the maximum clock). */
double freq_compute_w(const struct gpu_type *g, int f_mhz);
/* The clock a power limit holds g at: the highest grid clock whose compute
 * power (freq_compute_w) fits under limit_w; f_max when tdp_w does. The
 * driver lowers clocks until the draw fits, and a workload drawing less than
 * the limit is not slowed (topologies/derive/derive_powercap_check.py reads a
 * limit the same way). -1 when g has no frequency model or even f_min draws
 * more than the limit (below the model's clock range). */
int freq_clock_at_limit(const struct gpu_type *g, double limit_w);
/* Clocks of g's grid from f_max down to f_min: count, and the i-th. */
int freq_nclocks(const struct gpu_type *g);
int freq_clock(const struct gpu_type *g, int i);

#endif
