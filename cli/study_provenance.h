/* study_provenance.h — FILE.provenance.json beside a study's CSV: what wrote
 * the CSV (version, commit, command line, input checksums), one block per
 * invocation that added rows, so that the CSV itself stays one kind of row. */
#ifndef GT_CLI_STUDY_PROVENANCE_H
#define GT_CLI_STUDY_PROVENANCE_H

#include <stddef.h>

#include "sim/base/error.h"
#include "study/study.h"

/* "CSV.provenance.json" */
void study_provenance_path(const char *csv, char *out, size_t cap);

/* -1 (e) when csv's sidecar exists but is not one: checked before the study
 * runs, so that a bad sidecar stops it before any row is written. */
int study_provenance_check(const char *csv, gt_err *e);

/* Append this invocation's block (inputs: the model arguments that are files,
 * the --profile file, the generator's and catalogs' tables) to the sidecar of
 * csv, written atomically; nothing is written when the sidecar has blocks and
 * this invocation added no row. -1 (e) when the sidecar exists but is not one. */
int study_provenance_write(const char *csv, const char *models, const char *profile,
                           const study_summary *sum, gt_err *e);

#endif
