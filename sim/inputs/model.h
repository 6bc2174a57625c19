/* model.h — decoder-only Transformer configurations.
 *
 * A model comes from topologies/models.csv by id (aliases: "gpt3-xl" and the
 * dashed forms such as "llama2-7b"), from a JSON file with the same fields, or
 * from a Hugging Face config.json (model_hf.h). */
#ifndef GT_MODEL_H
#define GT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include "sim/base/error.h"

typedef enum { NORM_LAYERNORM, NORM_RMSNORM } norm_kind;

typedef struct model_spec {
    char id[48];
    int layers, hidden, heads, kv_heads, ffn, vocab, seq_len;
    bool gated_mlp;         /* SwiGLU-style MLP with three matrices */
    bool tied_embeddings;   /* LM head shares the embedding matrix */
    bool bias;              /* linear layers carry biases (GPT, OPT) */
    bool learned_pos;       /* learned position embedding of seq_len x hidden */
    norm_kind norm;
    double params_published; /* 0 when unknown */
} model_spec;

/* model_resolve / model_catalog_lookup: the name is not in the catalog (the
 * caller may suggest one of model_typable_names). */
#define MODEL_UNKNOWN (-2)

/* Resolve MODEL as given on the command line: a catalog id or alias, or a path
 * to a JSON file (anything containing '/' or ending in ".json"). */
int model_resolve(const char *arg, model_spec *m, gt_err *e);
/* The catalog's names as users type them (dashed ids, then aliases such as
 * gpt3-xl): a malloc'd array of *n names the caller frees. */
int model_typable_names(char (**out)[64], int *n, gt_err *e);
/* Look an id or alias up in a catalog file (MODEL_UNKNOWN when absent). */
int model_catalog_lookup(const char *path, const char *id, model_spec *m, gt_err *e);
/* All catalog rows (for tests and `model list`); caller frees *out. */
int model_catalog_load(const char *path, model_spec **out, int *n, gt_err *e);
int model_load_json(const char *path, model_spec *m, gt_err *e);
/* The same from a buffer (tests, fuzzers); `name` stands in for the path. */
int model_parse_json(const char *name, const char *buf, size_t len, model_spec *m, gt_err *e);
/* Semantic checks shared by both readers (heads divide hidden, ...). */
int model_validate(const model_spec *m, const char *where, gt_err *e);

#endif
