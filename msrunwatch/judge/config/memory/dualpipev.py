"""MindSpeed's DualPipeV schedule (`--schedules-method dualpipev`): what it puts on each rank.

The facts, from MindSpeed's documentation and schedule at a pinned commit (DUALPIPEV_SOURCES):
- The model is cut into 2 x PP chunks laid out in a V: pipeline rank r builds chunk r (layers
  r*c to (r+1)*c - 1, c = num_layers / (2 PP)) and chunk 2PP-1-r (the last layers counted from
  the end), so every rank holds num_layers / PP layers, and rank 0 holds both the first chunk
  (the embedding) and the last one (the output head, the loss, and MindSpeed-LLM's MTP layers).
  The documentation: the layer count must be a multiple of 2 x PP, the micro-batches at least
  2 x PP, "the output head is assigned to PP rank 0, which raises its static and dynamic memory".
- In flight: generate_dualpipev_schedule gives rank r 2PP-2-2r forward steps of its first chunk
  (warmup), then r+1 pairs of forwards of both chunks, after which every backward is paired with
  a forward: at peak rank r holds 2PP-1-r micro-batches of its first chunk and r+1 of its second,
  2PP chunks of c layers, as many layers' activations as PP micro-batches of a num_layers / PP
  stage. While one forward runs before the backward it overlaps, one chunk more is held: the
  figures take PP, the notes give the range up to PP + 1/2.
- The cooldown's weight-gradient split (--dualpipev-dw-detach) keeps activations until the
  deferred dw runs; MindSpeed turns it off by default, and the estimate does not model it.
"""

from __future__ import annotations

from msrunwatch.read.config.model import TrainingConfig

DUALPIPEV_SOURCES = (
    "Ascend/MindSpeed@028de58c docs/zh/features/dualpipev.md (V layout, head on PP rank 0, "
    "layers a multiple of 2PP, micro-batches >= 2PP); "
    "mindspeed/core/pipeline_parallel/dualpipev/dualpipev_chunks.py:43-53, 561-569 "
    "(each rank builds num_layers / PP / 2 layers per chunk, the second chunk from the end); "
    "dualpipev_schedules.py:310-346 (generate_dualpipev_schedule)"
)
DUALPIPEV_SHORT = "MindSpeed@028de58c dualpipev.md, dualpipev_schedules.py"


def dualpipev(cfg: TrainingConfig) -> bool:
    """Whether the config runs MindSpeed's DualPipeV schedule."""
    return str(cfg.get("schedules_method") or "").strip().lower() == "dualpipev"


def chunk_layers(layers: int, pp: int) -> int:
    """Layers in one of the 2 x PP chunks (MindSpeed: num_layers // PP // 2)."""
    return layers // pp // 2


def rank_of_layer(index: int, layers: int, pp: int) -> int:
    """The pipeline rank that builds layer `index` (0-based): chunk k = index // c sits on rank
    k for the first half and on rank 2PP-1-k for the second (the V)."""
    c = max(1, chunk_layers(layers, pp))
    k = min(index // c, 2 * pp - 1)
    return k if k < pp else 2 * pp - 1 - k


def in_flight(pp: int, micro_batches: int | None) -> float:
    """Micro-batches' worth of one rank's layers held at peak: 2PP chunks of half a rank's
    layers each, PP (fewer with fewer than 2PP micro-batches, which MindSpeed refuses)."""
    chunks = 2 * pp if not micro_batches else min(2 * pp, 2 * micro_batches)
    return chunks / 2
