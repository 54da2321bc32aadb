"""MindSpeed's dualpipev schedule in the memory estimate (memory/dualpipev.py): 2 x PP chunks in
a V, the head on rank 0, PP micro-batches' worth in flight on every rank, each figure checked
against hand arithmetic from MindSpeed's documentation and schedule."""

from __future__ import annotations

from typing import Any

from msrunwatch.judge.config.derive import derive
from msrunwatch.judge.config.memory import Estimate, estimate
from msrunwatch.judge.config.memory.dualpipev import rank_of_layer
from msrunwatch.read.config.model import TrainingConfig, Value
from tests.unit.test_memory_mtp import DENSE, H, V

BASE: dict[str, Any] = {**DENSE, "world": 4, "pp": 4, "gbs": 16, "num_layers": 16}
"""test_memory_mtp's dense model on four stages, with 16 layers: 8 dualpipev chunks of 2."""
DUAL = {"schedules_method": "dualpipev"}


def config(**changes: Any) -> TrainingConfig:
    values = {**BASE, **changes}
    return TrainingConfig("pretrain.sh", "megatron", {k: Value(v) for k, v in values.items()})


def run(**changes: Any) -> Estimate:
    return estimate(config(**changes))


def test_the_v_puts_chunk_r_and_chunk_2p_minus_1_minus_r_on_rank_r() -> None:
    # 16 layers, PP 4: 8 chunks of 2; rank 0 holds layers 0-1 and 14-15, rank 3 layers 6-9
    ranks = [rank_of_layer(i, 16, 4) for i in range(16)]
    assert ranks == [0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0]


def test_rank_0_holds_the_embedding_the_head_and_the_loss() -> None:
    plain, dual = run(), run(**DUAL)
    assert [s.layers for s in dual.stages] == [4, 4, 4, 4]
    assert dual.stages[0].embedding_params == V * H
    assert dual.stages[0].head_params == V * H + H  # the output layer and the final norm
    assert dual.stages[3].head_params == 0 and dual.stages[3].embedding_params == 0
    assert dual.stages[0].cross_entropy_mib == plain.stages[3].cross_entropy_mib
    assert dual.stages[3].cross_entropy_mib == 0.0


def test_every_rank_holds_pp_micro_batches_of_its_layers() -> None:
    # rank r: 2p-1-r forwards of its first chunk and r+1 of its second at peak: 2p chunks of
    # c = L / 2p layers, the activations of p micro-batches of its L / p layers
    plain, dual = run(), run(**DUAL)
    assert [s.in_flight for s in dual.stages] == [4.0, 4.0, 4.0, 4.0]
    assert [s.in_flight for s in plain.stages] == [4.0, 3.0, 2.0, 1.0]
    assert dual.stages[3].activations_mib == plain.stages[0].activations_mib


def test_noop_layers_are_taken_off_the_rank_the_v_gives_them() -> None:
    # layers 14 and 15 (the last chunk) are on rank 0 under dualpipev, on rank 3 otherwise
    dual = run(**DUAL, noop_layers="14,15")
    assert [s.layers for s in dual.stages] == [2, 4, 4, 4]


def test_block_recompute_counts_per_chunk() -> None:
    # --recompute-num-layers 1 with block: the first layer of each of the rank's two chunks
    recompute = {"recompute_granularity": "full", "recompute_method": "block"}
    dual = run(**DUAL, **recompute, recompute_num_layers=1)
    assert [s.recomputed_layers for s in dual.stages] == [2, 2, 2, 2]


def test_dualpipev_is_unvalidated_so_only_model_states_can_make_an_error() -> None:
    env = derive(config(**DUAL))
    assert any("dualpipev" in u for u in env["estimate_unvalidated"])
    assert env["estimate_band"] is None


def test_too_few_micro_batches_for_dualpipev_are_a_problem() -> None:
    dual = run(**DUAL, gbs=4)
    assert any("needs at least 2 x pp = 8" in p for p in dual.problems)
