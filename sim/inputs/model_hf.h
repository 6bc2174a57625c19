/* model_hf.h — a Hugging Face `config.json` read as a model_spec.
 *
 * `-m path/config.json` accepts the transformers config of the Llama, Mistral,
 * Qwen2, GPT-2 and OPT families next to GeoTrain's own model JSON. A document
 * is taken as a Hugging Face config when its top level has "model_type" (every
 * config saved by transformers has it). docs/library.md lists the field map. */
#ifndef GT_MODEL_HF_H
#define GT_MODEL_HF_H

#include <stdbool.h>
#include "sim/base/jsonio.h"
#include "sim/inputs/model.h"

/* True when the parsed document looks like a Hugging Face config. */
bool model_hf_detect(const jdoc *d);
/* Map the config's fields onto m (unknown fields are ignored: real configs
 * carry dozens that do not change the cost model). */
int model_hf_read(const jdoc *d, model_spec *m, gt_err *e);

#endif
