"""The model's graph rewritten to run on its int8 weights (meaning/int8_graph.py): what it rewrites, that its
vectors keep the float graph's meaning, the memory it saves, and the protobuf it writes."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.meaning import int8_graph as graph
from notewell.meaning.model import Embedder, load, model_file

TEXTS = [
    "We deploy on Tuesdays and Thursdays only, never on Fridays.",
    "which weekdays are releases allowed",
    "Refunds above 500 EUR need the finance lead's sign-off before they are paid.",
    "Les remboursements de plus de 500 euros doivent être validés par la responsable financière.",
    "Die Datenbank der Abrechnung wird jede Nacht um 2 Uhr gesichert.",
    "生产环境的数据库使用 PostgreSQL 15，每晚备份。",
    "ERR_CONN_RESET in payments-gateway after the TLS upgrade",
    "def retry_delay(attempts: int) -> float: return min(2 ** attempts, 300)",
    "ok",
    "The quarterly offsite is in Lisbon this year; " * 30,
]


def _float_graph() -> Embedder:
    """The pinned file as onnxruntime loads it unchanged: its int8 weights folded to float32 constants."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(model_file()), options, providers=["CPUExecutionProvider"])
    return Embedder(session, load().tokenizer, model_file())


def test_every_weight_product_and_embedding_table_runs_on_int8() -> None:
    rewritten = graph.int8_graph(model_file().read_bytes())
    # six layers of four attention and two feed-forward products; the word-piece and position tables
    assert (rewritten.matmuls, rewritten.gathers) == (36, 2)
    again = graph.int8_graph(rewritten.model)
    assert (again.matmuls, again.gathers) == (0, 0)  # nothing left to rewrite: no float weight is consumed


def test_the_int8_graph_keeps_the_float_graphs_meaning() -> None:
    served = load().embed(TEXTS)
    reference = _float_graph().embed(TEXTS)
    same = np.sum(served * reference, axis=1)
    assert same.min() > 0.96 and same.mean() > 0.985, same  # the shortest text ("ok") moves most: 0.973
    # what the vectors are for: the similarity of two texts, which the thresholds of docs/memory.md cut on
    moved = np.abs(served @ served.T - reference @ reference.T)
    assert moved.max() < 0.04, moved.max()


def test_a_texts_vector_is_the_same_whatever_it_is_embedded_with() -> None:
    """The int8 graph quantizes a run's activations with one scale, so texts run one at a time: a vector never
    depends on the texts of the same batch (nor on their padding)."""
    model = load()
    alone = model.embed_one(TEXTS[0])
    assert np.array_equal(model.embed(TEXTS)[0], alone)
    assert np.array_equal(model.embed([TEXTS[0], TEXTS[-1]])[0], alone)
    assert np.array_equal(model.embed([TEXTS[5], TEXTS[0]])[1], alone)


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1))
def test_a_varint_reads_back_as_written(value: int) -> None:
    data = graph.encode_varint(value)
    assert graph._varint(data + b"\x01", 0) == (value % (1 << 64), len(data))


@given(st.lists(st.text(min_size=1, max_size=20), max_size=4), st.lists(st.text(min_size=1, max_size=20), max_size=3),
       st.text(min_size=1, max_size=30), st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_a_written_node_reads_back(inputs: list[str], outputs: list[str], op_type: str, axis: int) -> None:
    [written] = list(graph._fields(memoryview(graph._node(op_type, inputs, outputs, axis=axis))))
    assert written.number == 1 and isinstance(written.value, memoryview)
    node = graph._parse_node(written.value)
    assert (node.op_type, node.inputs, node.outputs, node.ints) == (op_type, inputs, outputs, {"axis": axis})


def _tensor(name: str, data_type: int, dims: list[int]) -> bytes:
    body = b"".join(graph._int_field(1, d) for d in dims) + graph._int_field(2, data_type)
    return graph._len_field(5, body + graph._len_field(8, name.encode()))  # GraphProto.initializer


def _model(scale_dims: list[int], cast_to: int = 1, weight_type: int = 3) -> bytes:
    """y = x @ (Cast(w) * s), w int8 2x3: the smallest graph of the pattern, with the scale's shape given."""
    body = _tensor("w", weight_type, [2, 3]) + _tensor("s", 1, scale_dims)
    body += graph._node("Cast", ["w"], ["wf"], to=cast_to) + graph._node("Mul", ["wf", "s"], ["wd"])
    body += graph._node("MatMul", ["x", "wd"], ["y"])
    return graph._len_field(7, body)  # ModelProto.graph


@pytest.mark.parametrize(("scale_dims", "cast_to", "weight_type", "rewritten"), [
    ([1, 3], 1, 3, 1),  # one scale per output column: moves past the product
    ([3], 1, 3, 1),
    ([], 1, 3, 1),
    ([2, 1], 1, 3, 0),  # one per input row: it does not commute with the product, so the node stays
    ([1, 3], 10, 3, 0),  # a Cast to float16
    ([1, 3], 1, 2, 0),  # a uint8 weight
])
def test_only_a_product_the_rewrite_keeps_exact_is_rewritten(scale_dims: list[int], cast_to: int, weight_type: int,
                                                             rewritten: int) -> None:
    model = _model(scale_dims, cast_to, weight_type)
    result = graph.int8_graph(model)
    assert result.matmuls == rewritten
    if not rewritten:
        assert result.model == model  # byte for byte


@pytest.mark.parametrize("model", [b"", b"\x0a\x05abc", b"\x3a\xff\xff\xff\xff\x0f", b"\x3b", b"\x00\x01",
                                   b"\x3a\x02\x09\x01", b"\x3a\x03\x0a\x01\xff"])
def test_what_is_not_a_model_is_refused_not_misread(model: bytes) -> None:
    with pytest.raises(graph.GraphError):
        graph.int8_graph(model)
