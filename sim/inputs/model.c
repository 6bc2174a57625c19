/* model.c — model catalog and inline model files (see model.h). */
#include "sim/inputs/model.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/datadir.h"
#include "sim/base/jsonio.h"
#include "sim/inputs/model_hf.h"

/* Names users type for a catalog id ("gpt3-xl" is GPT-3 XL's name in Brown
 * et al. 2020, Table 2.1). */
static const char *const ALIASES[][2] = {{"gpt3-xl", "gpt3_1.3b"}, {"gpt3_xl", "gpt3_1.3b"}};
enum { NALIASES = sizeof ALIASES / sizeof *ALIASES };

/* "gpt3-xl" -> "gpt3_1.3b"; dashed ids -> underscored ids. */
static void canonical_id(const char *arg, char *out, size_t cap)
{
    for (int a = 0; a < NALIASES; a++)
        if (strcmp(arg, ALIASES[a][0]) == 0) {
            snprintf(out, cap, "%s", ALIASES[a][1]);
            return;
        }
    size_t i = 0;
    for (; arg[i] && i + 1 < cap; i++)
        out[i] = arg[i] == '-' ? '_' : (char)tolower((unsigned char)arg[i]);
    out[i] = '\0';
}

static int parse_bool01(const csv_reader *r, int col, bool *out, gt_err *e)
{
    long v;
    if (csv_long(r, col, 0, 1, &v, e))
        return -1;
    *out = v != 0;
    return 0;
}

static int read_model_row(const csv_reader *r, const int *col, model_spec *m, gt_err *e)
{
    memset(m, 0, sizeof *m);
    const char *id = csv_get(r, col[0]);
    if (!*id || strlen(id) >= sizeof m->id)
        return csv_fail_at(r, col[0], e, "empty or too long");
    snprintf(m->id, sizeof m->id, "%s", id);
    long v[7];
    for (int i = 0; i < 7; i++)
        if (csv_long(r, col[1 + i], 1, 100000000, &v[i], e))
            return -1;
    m->layers = (int)v[0];
    m->hidden = (int)v[1];
    m->heads = (int)v[2];
    m->kv_heads = (int)v[3];
    m->ffn = (int)v[4];
    m->vocab = (int)v[5];
    m->seq_len = (int)v[6];
    if (parse_bool01(r, col[8], &m->gated_mlp, e) ||
        parse_bool01(r, col[9], &m->tied_embeddings, e) ||
        parse_bool01(r, col[10], &m->bias, e) || parse_bool01(r, col[12], &m->learned_pos, e))
        return -1;
    const char *norm = csv_get(r, col[11]);
    if (strcmp(norm, "layernorm") == 0)
        m->norm = NORM_LAYERNORM;
    else if (strcmp(norm, "rmsnorm") == 0)
        m->norm = NORM_RMSNORM;
    else
        return csv_fail_at(r, col[11], e, "'%s', expected layernorm or rmsnorm", norm);
    if (csv_double(r, col[13], 0, 1e15, 1, 0, &m->params_published, e))
        return -1;
    char where[512];
    snprintf(where, sizeof where, "%s:%d", r->path, r->line);
    return model_validate(m, where, e);
}

int model_catalog_load(const char *path, model_spec **out, int *n, gt_err *e)
{
    static const char *names[] = {"id",     "layers",     "hidden",          "heads",
                                  "kv_heads", "ffn",      "vocab",           "seq_len",
                                  "gated_mlp", "tied_embeddings", "bias",    "norm",
                                  "learned_pos", "params_published"};
    *out = NULL;
    *n = 0;
    csv_reader r;
    if (csv_open(&r, path, e))
        return -1;
    int col[14];
    for (int i = 0; i < 14; i++)
        if ((col[i] = csv_col(&r, names[i], 1, e)) < 0)
            goto fail;
    int cap = 0, got;
    while ((got = csv_next(&r, e)) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            model_spec *nm = realloc(*out, (size_t)cap * sizeof *nm);
            if (!nm) {
                gt_fail(e, "%s: out of memory", path);
                goto fail;
            }
            *out = nm;
        }
        if (read_model_row(&r, col, &(*out)[*n], e))
            goto fail;
        (*n)++;
    }
    if (got < 0)
        goto fail;
    csv_close(&r);
    return 0;
fail:
    csv_close(&r);
    free(*out);
    *out = NULL;
    *n = 0;
    return -1;
}

/* A catalog id as users type it: dashes for underscores. */
static void typable(const char *id, char out[64])
{
    snprintf(out, 64, "%s", id);
    for (char *c = out; *c; c++)
        *c = *c == '_' ? '-' : *c;
}

/* The first (dashed) alias of a catalog id, or NULL. */
static const char *alias_of(const char *id)
{
    for (int a = 0; a < NALIASES; a++)
        if (!strcmp(ALIASES[a][1], id) && strchr(ALIASES[a][0], '-'))
            return ALIASES[a][0];
    return NULL;
}

int model_typable_names(char (**out)[64], int *n, gt_err *e)
{
    *out = NULL;
    *n = 0;
    char path[4096];
    if (datadir_find("models.csv", path, sizeof path))
        return gt_fail(e, "model catalog models.csv not found (set GEOTRAIN_DATA)");
    model_spec *all;
    int rows;
    if (model_catalog_load(path, &all, &rows, e))
        return -1;
    char (*names)[64] = malloc(sizeof *names * (size_t)(rows + NALIASES));
    if (!names) {
        free(all);
        return gt_fail(e, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < rows; i++)
        typable(all[i].id, names[k++]);
    for (int a = 0; a < NALIASES; a++)
        if (strchr(ALIASES[a][0], '-'))
            snprintf(names[k++], 64, "%s", ALIASES[a][0]);
    free(all);
    *out = names;
    *n = k;
    return 0;
}

int model_catalog_lookup(const char *path, const char *arg, model_spec *m, gt_err *e)
{
    char id[64];
    canonical_id(arg, id, sizeof id);
    model_spec *all;
    int n;
    if (model_catalog_load(path, &all, &n, e))
        return -1;
    int found = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0)
            found = i;
    if (found < 0) {
        /* the names as users type them (dashes; canonical_id maps them back) */
        char list[1024] = "";
        for (int i = 0; i < n; i++) {
            char typed[64];
            typable(all[i].id, typed);
            strncat(list, typed, sizeof list - strlen(list) - 3);
            const char *alias = alias_of(all[i].id);
            if (alias) {
                strncat(list, " (", sizeof list - strlen(list) - 1);
                strncat(list, alias, sizeof list - strlen(list) - 1);
                strncat(list, ")", sizeof list - strlen(list) - 1);
            }
            if (i + 1 < n)
                strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        free(all);
        gt_fail(e, "unknown model '%s' (catalog %s has: %s; or give a JSON file)", arg, path,
                list);
        return MODEL_UNKNOWN;
    }
    *m = all[found];
    free(all);
    return 0;
}

int model_validate(const model_spec *m, const char *where, gt_err *e)
{
    if (m->heads <= 0 || m->hidden % m->heads)
        return gt_fail(e, "%s: hidden %d is not a multiple of heads %d", where, m->hidden,
                       m->heads);
    if (m->kv_heads <= 0 || m->kv_heads > m->heads || m->heads % m->kv_heads)
        return gt_fail(e, "%s: kv_heads %d must divide heads %d", where, m->kv_heads,
                       m->heads);
    if (m->layers > 100000 || m->hidden > 1000000 || m->vocab > 100000000)
        return gt_fail(e, "%s: implausible size (layers %d, hidden %d, vocab %d)", where,
                       m->layers, m->hidden, m->vocab);
    return 0;
}

/* The fields of a model document already parsed into d (d->path names it). */
static int model_from_doc(const jdoc *d, model_spec *m, gt_err *e)
{
    static const char *const keys[] = {"id",   "layers", "hidden", "heads", "kv_heads",
                                       "ffn",  "vocab",  "seq_len", "gated_mlp",
                                       "tied_embeddings", "bias", "norm", "learned_pos",
                                       "params_published", "source", NULL};
    const char *path = d->path;
    if (model_hf_detect(d))
        return model_hf_read(d, m, e);
    memset(m, 0, sizeof *m);
    json_t *o = d->root;
    long heads = 0, kv, v[6];
    static const char *ints[] = {"layers", "hidden", "heads", "ffn", "vocab", "seq_len"};
    int rc = jdoc_keys(d, o, "", keys, e);
    if (!rc)
        rc = jdoc_str(d, o, "", "id", 0, "inline", m->id, sizeof m->id, e);
    for (int i = 0; i < 6 && !rc; i++) {
        long hi = i == 0 ? 100000 : 100000000;
        rc = jdoc_int(d, o, "", ints[i], 1, 1, hi, 0, &v[i], e);
    }
    if (!rc) {
        heads = v[2];
        rc = jdoc_int(d, o, "", "kv_heads", 0, 1, heads, heads, &kv, e);
    }
    double pub = 0;
    if (!rc)
        rc = jdoc_num(d, o, "", "params_published", 0, 0, 1e15, 0, &pub, e);
    char norm[16] = "layernorm";
    if (!rc)
        rc = jdoc_str(d, o, "", "norm", 0, "layernorm", norm, sizeof norm, e);
    static const char *flags[] = {"gated_mlp", "tied_embeddings", "bias", "learned_pos"};
    bool fv[4] = {false, false, true, true};
    for (int i = 0; i < 4 && !rc; i++) {
        json_t *b = json_object_get(o, flags[i]);
        if (!b)
            continue;
        if (json_is_boolean(b))
            fv[i] = json_is_true(b);
        else if (json_is_integer(b) && (json_integer_value(b) == 0 || json_integer_value(b) == 1))
            fv[i] = json_integer_value(b) == 1;
        else
            rc = jdoc_fail(d, e, flags[i], "expected true/false");
    }
    if (!rc && strcmp(norm, "layernorm") && strcmp(norm, "rmsnorm"))
        rc = jdoc_fail(d, e, "norm", "expected \"layernorm\" or \"rmsnorm\" (got \"%s\")",
                       norm);
    if (!rc) {
        m->layers = (int)v[0];
        m->hidden = (int)v[1];
        m->heads = (int)v[2];
        m->ffn = (int)v[3];
        m->vocab = (int)v[4];
        m->seq_len = (int)v[5];
        m->kv_heads = (int)kv;
        m->gated_mlp = fv[0];
        m->tied_embeddings = fv[1];
        m->bias = fv[2];
        m->learned_pos = fv[3];
        m->norm = strcmp(norm, "rmsnorm") == 0 ? NORM_RMSNORM : NORM_LAYERNORM;
        m->params_published = pub;
        rc = model_validate(m, path, e);
    }
    return rc;
}

int model_load_json(const char *path, model_spec *m, gt_err *e)
{
    jdoc d;
    if (jdoc_load(&d, path, e))
        return -1;
    int rc = model_from_doc(&d, m, e);
    jdoc_free(&d);
    return rc;
}

int model_parse_json(const char *name, const char *buf, size_t len, model_spec *m, gt_err *e)
{
    jdoc d;
    if (jdoc_parse(&d, name, buf, len, e))
        return -1;
    int rc = model_from_doc(&d, m, e);
    jdoc_free(&d);
    return rc;
}

int model_resolve(const char *arg, model_spec *m, gt_err *e)
{
    size_t n = strlen(arg);
    if (strchr(arg, '/') || (n > 5 && strcmp(arg + n - 5, ".json") == 0))
        return model_load_json(arg, m, e);
    char path[4096];
    if (datadir_find("models.csv", path, sizeof path))
        return gt_fail(e, "model catalog models.csv not found (set GEOTRAIN_DATA)");
    return model_catalog_lookup(path, arg, m, e);
}
