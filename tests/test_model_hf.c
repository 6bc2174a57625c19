/* test_model_hf.c — Hugging Face config.json import (sim/inputs/model_hf.c).
 *
 * Oracles: the catalog rows of topologies/models.csv for the same models
 * (independently transcribed from the papers/model cards), and parameter
 * counts worked by hand for the two families the catalog lacks. */
#include "testutil.h"

#include "sim/models/cost.h"
#include "sim/base/datadir.h"
#include "sim/inputs/model.h"

#define HF "tests/fixtures/hf/"

static void load_hf(const char *dir, model_spec *m)
{
    char path[256];
    snprintf(path, sizeof path, HF "%s/config.json", dir);
    gt_err e = {{0}};
    int rc = model_resolve(path, m, &e);
    if (rc)
        fail_msg("%s: %s", path, e.msg);
}

/* Every architectural field equal to the catalog row, and so the parameter count. */
static void check_against_catalog(const char *dir, const char *catalog_id)
{
    model_spec hf, cat;
    load_hf(dir, &hf);
    gt_err e = {{0}};
    assert_int_equal(model_resolve(catalog_id, &cat, &e), 0);
    assert_int_equal(hf.layers, cat.layers);
    assert_int_equal(hf.hidden, cat.hidden);
    assert_int_equal(hf.heads, cat.heads);
    assert_int_equal(hf.kv_heads, cat.kv_heads);
    assert_int_equal(hf.ffn, cat.ffn);
    assert_int_equal(hf.vocab, cat.vocab);
    assert_int_equal(hf.seq_len, cat.seq_len);
    assert_int_equal(hf.gated_mlp, cat.gated_mlp);
    assert_int_equal(hf.tied_embeddings, cat.tied_embeddings);
    assert_int_equal(hf.bias, cat.bias);
    assert_int_equal(hf.learned_pos, cat.learned_pos);
    assert_int_equal(hf.norm, cat.norm);
    assert_true(cost_model_params(&hf) == cost_model_params(&cat));
}

static void llama2_7b_matches_catalog(void **s)
{
    (void)s;
    check_against_catalog("llama-2-7b-hf", "llama2_7b");
    model_spec m;
    load_hf("llama-2-7b-hf", &m);
    /* 6.74 B on the model card: 32 x 202,383,360 + 2 x 32000 x 4096 + 4096 */
    assert_true(cost_model_params(&m) == 6738415616.0);
}

static void llama3_8b_matches_catalog(void **s)
{
    (void)s;
    check_against_catalog("llama-3-8b", "llama3_8b");
}

/* GPT-2 writes "n_inner": null for 4 x n_embd; n_positions is the context. */
static void gpt2_xl_matches_catalog(void **s)
{
    (void)s;
    check_against_catalog("gpt2-xl", "gpt2_xl");
    model_spec m;
    load_hf("gpt2-xl", &m);
    assert_int_equal(m.ffn, 4 * 1600);
    assert_string_equal(m.id, "gpt2_xl");
}

static void opt_1_3b_matches_catalog(void **s)
{
    (void)s;
    check_against_catalog("opt-1.3b", "opt_1.3b");
    model_spec m;
    load_hf("opt-1.3b", &m);
    assert_string_equal(m.id, "opt_1.3b"); /* from "_name_or_path" */
}

/* Mistral 7B (not in the catalog), by hand: per layer q,o 4096^2 each, k,v
 * 4096 x 1024 each (8 KV heads), SwiGLU 3 x 4096 x 14336, two RMSNorms 2 x 4096
 * = 218,112,000; x 32 = 6,979,584,000; untied embedding + head 2 x 32000 x
 * 4096 = 262,144,000; final norm 4096. Total 7,241,732,096 (the "7.24 B" of
 * the model card). */
static void mistral_7b_by_hand(void **s)
{
    (void)s;
    model_spec m;
    load_hf("mistral-7b-v0.1", &m);
    assert_int_equal(m.kv_heads, 8);
    assert_false(m.tied_embeddings);
    assert_true(cost_model_params(&m) == 7241732096.0);
}

/* Qwen2-0.5B: 494,032,768 parameters with its q/k/v biases (per layer 896 +
 * 2 x 128 = 1152); the cost model has no q/k/v-only bias, so the import counts
 * 494,032,768 - 24 x 1152 = 494,005,120. Tied embeddings (no separate head). */
static void qwen2_by_hand(void **s)
{
    (void)s;
    model_spec m;
    load_hf("qwen2-0.5b", &m);
    assert_true(m.tied_embeddings);
    assert_int_equal(m.kv_heads, 2);
    assert_true(cost_model_params(&m) == 494005120.0);
}

static void expect_error(const char *json, const char *needle)
{
    char path[64];
    write_temp(json, path, sizeof path);
    model_spec m;
    gt_err e = {{0}};
    assert_int_not_equal(model_resolve(path, &m, &e), 0);
    if (!strstr(e.msg, needle))
        fail_msg("expected '%s' in: %s", needle, e.msg);
    if (!strstr(e.msg, path))
        fail_msg("error does not name the file: %s", e.msg);
    unlink(path);
}

static void bad_configs_refused(void **s)
{
    (void)s;
    expect_error("{\"model_type\": \"t5\", \"d_model\": 512}", "\"t5\" is not supported");
    expect_error("{\"model_type\": \"llama\",\n \"num_hidden_layers\": 2}",
                 "hidden_size: missing");
    expect_error("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                 " \"num_attention_heads\": 4, \"intermediate_size\": 128,\n"
                 " \"vocab_size\": -5, \"max_position_embeddings\": 16}",
                 ":3:16: vocab_size: must be in");
    /* OPT-350M projects 512-wide embeddings: not representable, so refused */
    expect_error("{\"model_type\": \"opt\", \"hidden_size\": 1024, \"num_hidden_layers\": 24,"
                 " \"num_attention_heads\": 16, \"ffn_dim\": 4096, \"vocab_size\": 50272,"
                 " \"max_position_embeddings\": 2048, \"word_embed_proj_dim\": 512}",
                 "word_embed_proj_dim");
    expect_error("{\"model_type\": \"mistral\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                 " \"num_attention_heads\": 4, \"num_key_value_heads\": 3,"
                 " \"intermediate_size\": 128, \"vocab_size\": 10,"
                 " \"max_position_embeddings\": 16}", "num_key_value_heads");
}

/* -m path/config.json through the binary, as a user types it. */
static void cli_accepts_config_json(void **s)
{
    (void)s;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "model", "show", "-m", HF "mistral-7b-v0.1/config.json",
                                 "--json", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "7241732096"));
    tu_run_free(&r);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama2_7b_matches_catalog), cmocka_unit_test(llama3_8b_matches_catalog),
        cmocka_unit_test(gpt2_xl_matches_catalog),   cmocka_unit_test(opt_1_3b_matches_catalog),
        cmocka_unit_test(mistral_7b_by_hand),        cmocka_unit_test(qwen2_by_hand),
        cmocka_unit_test(bad_configs_refused),       cmocka_unit_test(cli_accepts_config_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
