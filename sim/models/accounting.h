/* accounting.h — where each GPU's time went and what it cost (docs/models.md).
 *
 * Every selected GPU is, at each instant of the iteration, in one state:
 *   compute  running a forward, backward or optimizer op      (TDP at the maximum
 *            clock; P(f) of freq.h for an op run at a lower SM clock)
 *   comm     blocked: its next op's input transfer is in flight, or one of
 *            its gradient-sync groups is running              (P2P-blocking power, gpu_comm_w)
 *   idle     anything else: pipeline bubbles, waiting for others (idle_w)
 * so compute + comm + idle = iteration time exactly. Joules = sum of power x
 * time x the site's PUE; WAN bytes may add network energy per byte.
 * Money = electricity (kWh x site price) + WAN egress (GB x price). */
#ifndef GT_ACCOUNTING_H
#define GT_ACCOUNTING_H

#include <stdint.h>
#include "sim/models/timing.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"

typedef struct lane_account {
    int64_t compute_ns, comm_ns, idle_ns;
    double energy_j;        /* of ONE GPU of the lane, with PUE */
} lane_account;

typedef struct run_totals {
    double gpu_energy_j;    /* all selected GPUs */
    double network_j;
    double energy_j;        /* gpu + network (+ unselected when charged) */
    double unselected_j;
    double carbon_g;
    double usd;
    double busy_ns, gpu_ns;   /* summed over GPUs: compute and total time (double:
                               * 2e5 GPUs x a long iteration pass int64) */
} run_totals;

/* Lane l's state times and joules from its sums: compute = optimizer +
 * ops at the maximum clock, slow = ops below it (slow_wns their watt-ns),
 * comm = sync + blocked on transfers; idle is the rest of the iteration.
 * account_lanes walks the ops for these; the estimator's per-stage path
 * has them in closed form. */
void account_lane_finish(const topology *t, const workload *w, const timing *tm, int l,
                         int64_t compute, int64_t slow, double slow_wns, int64_t comm,
                         lane_account *a);
void account_lanes(const topology *t, const workload *w, const timing *tm, lane_account *out);
void account_totals(const topology *t, const workload *w, const timing *tm,
                    const lane_account *la, int charge_unselected, run_totals *out);

#endif
