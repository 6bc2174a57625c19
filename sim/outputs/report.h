/* report.h — what `geotrain simulate` prints: a human table, JSON with the
 * stable keys of docs/cli.md, and CSV rows. */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stdio.h>
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulate.h"
#include "sim/inputs/topology.h"

struct json_t *report_json(const topology *t, const job *j, const plan *p, const sim_detail *d);
void report_human(FILE *out, const topology *t, const job *j, const plan *p, const sim_detail *d);
/* One header line and one row per GPU plus a "total" row. */
int report_csv_write(FILE *out, const topology *t, const plan *p, const sim_detail *d);

#endif
