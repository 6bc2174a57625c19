/* model_hf.c — Hugging Face config.json -> model_spec (see model_hf.h).
 *
 * Field names differ by family (transformers' LlamaConfig, MistralConfig,
 * Qwen2Config, GPT2Config, OPTConfig): each quantity is looked up under its
 * names in order, and JSON null counts as absent (GPT-2 writes "n_inner": null
 * for 4 x n_embd). What a config does not state — norm kind, gated MLP, biases,
 * learned positions, default of tie_word_embeddings — follows the family's
 * architecture in transformers' modeling code, held in FAMILIES below. */
#include "sim/inputs/model_hf.h"

#include <ctype.h>
#include <string.h>

typedef struct hf_family {
    const char *model_type;
    bool gated_mlp, bias, learned_pos, tied_default;
    norm_kind norm;
} hf_family;

/* Qwen2 has biases on q/k/v only; the cost model's `bias` means biases on
 * every linear layer, so Qwen2 is read without them (24 x 1152 = 27,648 of
 * Qwen2-0.5B's 494 M parameters; docs/library.md). */
static const hf_family FAMILIES[] = {
    {"llama", true, false, false, false, NORM_RMSNORM},
    {"mistral", true, false, false, false, NORM_RMSNORM},
    {"qwen2", true, false, false, false, NORM_RMSNORM},
    {"gpt2", false, true, true, true, NORM_LAYERNORM},
    {"opt", false, true, true, true, NORM_LAYERNORM},
};
#define N_FAMILIES (sizeof FAMILIES / sizeof *FAMILIES)

bool model_hf_detect(const jdoc *d)
{
    return json_object_get(d->root, "model_type") != NULL;
}

/* The first of `names` present and not null; NULL if none. */
static const char *first_key(json_t *o, const char *const *names)
{
    for (; *names; names++) {
        json_t *v = json_object_get(o, *names);
        if (v && !json_is_null(v))
            return *names;
    }
    return NULL;
}

/* An integer under any of `names`; missing: dflt if dflt > 0, else an error. */
static int hf_int(const jdoc *d, const char *const *names, long hi, long dflt, int *out,
                  gt_err *e)
{
    const char *k = first_key(d->root, names);
    if (!k) {
        if (dflt > 0) {
            *out = (int)dflt;
            return 0;
        }
        char list[160] = "";
        for (const char *const *n = names; *n; n++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     n == names ? "" : " or ", *n);
        return jdoc_fail(d, e, names[0], "missing, expected an integer (%s)", list);
    }
    long v;
    if (jdoc_int(d, d->root, "", k, 1, 1, hi, 0, &v, e))
        return -1;
    *out = (int)v;
    return 0;
}

static const hf_family *find_family(const jdoc *d, gt_err *e)
{
    char type[32];
    if (jdoc_str(d, d->root, "", "model_type", 1, NULL, type, sizeof type, e))
        return NULL;
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (strcmp(type, FAMILIES[i].model_type) == 0)
            return &FAMILIES[i];
    jdoc_fail(d, e, "model_type",
              "\"%s\" is not supported (expected llama, mistral, qwen2, gpt2 or opt)", type);
    return NULL;
}

/* Refuse what the cost model cannot represent rather than misprice it. */
static int check_supported(const jdoc *d, const hf_family *f, const model_spec *m,
                           gt_err *e)
{
    json_t *o = d->root;
    json_t *v = json_object_get(o, "word_embed_proj_dim");
    if (v && json_is_integer(v) && json_integer_value(v) != m->hidden)
        return jdoc_fail(d, e, "word_embed_proj_dim",
                         "%lld differs from hidden_size %d (projected embeddings, as in "
                         "OPT-350M, are not modelled)", (long long)json_integer_value(v),
                         m->hidden);
    v = json_object_get(o, "head_dim");
    if (v && json_is_integer(v) && json_integer_value(v) * m->heads != m->hidden)
        return jdoc_fail(d, e, "head_dim", "%lld x %d heads != hidden_size %d (not modelled)",
                         (long long)json_integer_value(v), m->heads, m->hidden);
    static const char *const BIASES[] = {"attention_bias", "mlp_bias"};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(o, BIASES[i]);
        if (v && json_is_true(v) && !f->bias)
            return jdoc_fail(d, e, BIASES[i],
                             "true is not modelled (biases on all linear layers or none)");
    }
    return 0;
}

/* id: the last part of "_name_or_path", else the folder holding config.json,
 * else the file name without ".json"; lower case, '-' -> '_' like catalog ids. */
static void hf_id(const jdoc *d, char *out, size_t cap)
{
    char buf[256] = "";
    json_t *np = json_object_get(d->root, "_name_or_path");
    const char *p = d->path;
    if (np && json_is_string(np) && *json_string_value(np)) {
        snprintf(buf, sizeof buf, "%s", json_string_value(np));
    } else {
        snprintf(buf, sizeof buf, "%s", p);
        char *slash = strrchr(buf, '/');
        if (slash && strcmp(slash + 1, "config.json") == 0)
            *slash = '\0';
        else if (strlen(buf) > 5 && strcmp(buf + strlen(buf) - 5, ".json") == 0)
            buf[strlen(buf) - 5] = '\0';
    }
    while (strlen(buf) > 1 && buf[strlen(buf) - 1] == '/')
        buf[strlen(buf) - 1] = '\0';
    const char *base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
    size_t i = 0;
    for (; base[i] && i + 1 < cap; i++)
        out[i] = base[i] == '-' ? '_' : (char)tolower((unsigned char)base[i]);
    out[i] = '\0';
    if (!*out)
        snprintf(out, cap, "hf_model");
}

int model_hf_read(const jdoc *d, model_spec *m, gt_err *e)
{
    static const char *const LAYERS[] = {"num_hidden_layers", "n_layer", NULL};
    static const char *const HIDDEN[] = {"hidden_size", "n_embd", NULL};
    static const char *const HEADS[] = {"num_attention_heads", "n_head", NULL};
    static const char *const KV[] = {"num_key_value_heads", NULL};
    static const char *const FFN[] = {"intermediate_size", "ffn_dim", "n_inner", NULL};
    static const char *const VOCAB[] = {"vocab_size", NULL};
    static const char *const SEQ[] = {"max_position_embeddings", "n_positions", "n_ctx", NULL};
    memset(m, 0, sizeof *m);
    const hf_family *f = find_family(d, e);
    if (!f)
        return -1;
    if (hf_int(d, LAYERS, 100000, 0, &m->layers, e) ||
        hf_int(d, HIDDEN, 1000000, 0, &m->hidden, e) ||
        hf_int(d, HEADS, 100000, 0, &m->heads, e) ||
        hf_int(d, KV, m->heads, m->heads, &m->kv_heads, e) ||
        /* GPT-2 leaves n_inner null for the 4 x n_embd MLP */
        hf_int(d, FFN, 100000000, f->gated_mlp ? 0 : 4L * m->hidden, &m->ffn, e) ||
        hf_int(d, VOCAB, 100000000, 0, &m->vocab, e) ||
        hf_int(d, SEQ, 100000000, 0, &m->seq_len, e))
        return -1;
    m->gated_mlp = f->gated_mlp;
    m->bias = f->bias;
    m->learned_pos = f->learned_pos;
    m->norm = f->norm;
    m->tied_embeddings = f->tied_default;
    json_t *tie = json_object_get(d->root, "tie_word_embeddings");
    if (tie && !json_is_boolean(tie))
        return jdoc_fail(d, e, "tie_word_embeddings", "expected true/false");
    if (tie)
        m->tied_embeddings = json_is_true(tie);
    if (check_supported(d, f, m, e))
        return -1;
    /* model_validate says the same without the config's field names */
    if (m->hidden % m->heads)
        return jdoc_fail(d, e, first_key(d->root, HEADS),
                         "%d heads do not divide hidden size %d", m->heads, m->hidden);
    if (m->heads % m->kv_heads)
        return jdoc_fail(d, e, "num_key_value_heads", "%d does not divide %d attention heads",
                         m->kv_heads, m->heads);
    hf_id(d, m->id, sizeof m->id);
    return model_validate(m, d->path, e);
}
