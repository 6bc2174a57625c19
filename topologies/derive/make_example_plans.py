#!/usr/bin/env python3
"""make_example_plans.py — hand-made example plans for the shipped topologies.

These are deliberately simple, documented plans (not optimised) so that
`geotrain simulate` is usable without any planner: GPUs in rank order (file
order), S stages x D pipelines, near-uniform layers (the first stage holds one layer
less, the last one more, so that GPT3-XL fits a 16 GiB V100), equal microbatches per
pipeline. Each plan states its job in topologies/plans/README.md.
Run from the repository root: python3 topologies/derive/make_example_plans.py
"""
import json
import os

def gpu_ids(topo):
    ids = []
    for s in topo["sites"]:
        node = 0
        for n in s["nodes"]:
            for _ in range(n.get("repeat", 1)):
                for g in range(n["count"]):
                    ids.append(f'{s["id"]}/{node}/{g}')
                node += 1
    return ids

def rank_order(topo, stages, pipes, layers, batch, schedule, sync, b=1):
    ids = gpu_ids(topo)
    assert stages * pipes <= len(ids)
    per = layers // stages
    assert per * stages == layers
    # uniform, except that the first stage (embedding + the most activations
    # in flight under 1F1B) gives one layer to the last stage: a uniform
    # split of GPT3-XL needs 16.03 GiB on a 16 GiB V100
    bounds = [k * per for k in range(stages + 1)]
    bounds[1] -= 1
    for k in range(2, stages):
        bounds[k] -= 1
    plan = {"planner": "hand-rank-order", "objective": "time", "schedule": schedule,
            "dp_sync": sync, "microbatch_size": b, "pipelines": []}
    for p in range(pipes):
        st = []
        for k in range(stages):
            st.append({"gpus": [ids[p * stages + k]], "layers": [bounds[k], bounds[k + 1] - 1]})
        plan["pipelines"].append({"microbatches": batch // b // pipes, "stages": st})
    return plan

EXAMPLES = [
    # file, topology, stages, pipes, layers, batch, schedule, sync
    ("case5-rank-order", "yuan2022/case5.json", 8, 8, 24, 1024, "1f1b", "ps"),
    ("case1-rank-order", "yuan2022/case1.json", 8, 8, 24, 1024, "1f1b", "ps"),
    ("aws-world-10-rank-order", "real/aws-world-10.json", 8, 10, 24, 1000, "1f1b", "hierarchical"),
    ("world-hetero-rank-order", "pools/world-hetero.json", 8, 7, 24, 1022, "1f1b", "hierarchical"),
]

def main():
    for name, topo_file, S, D, L, B, sched, sync in EXAMPLES:
        topo = json.load(open(os.path.join("topologies", topo_file)))
        plan = rank_order(topo, S, D, L, B - B % D, sched, sync)
        out = os.path.join("topologies", "plans", name + ".plan.json")
        with open(out + ".tmp", "w") as f:
            json.dump(plan, f, indent=1)
            f.write("\n")
        os.replace(out + ".tmp", out)
        print(out)

if __name__ == "__main__":
    main()
