"""The pinned model's graph, rewritten so that its weights stay int8 while it runs.

The model file holds each weight as int8 with a float scale, turned back into float32 by a ``Cast`` and a
``Mul`` in the graph. onnxruntime folds those two into float32 constants when it loads the model, so a loaded
model held about 160 MB: 91 MB of float32 weights (47 MB of them the word-piece table) beside the int8 ones.
This rewrite changes only what consumes a weight, never a weight:

- a ``MatMul`` by an int8 weight becomes ``DynamicQuantizeLinear`` of its input, ``MatMulInteger`` and the two
  scales (the pattern onnxruntime fuses into one int8 kernel, ``MatMulIntegerToFloat``);
- a ``Gather`` from an int8 table (the word-piece and position embeddings) gathers the int8 rows and their
  scales, then multiplies: the same numbers as before, without a float32 copy of the table.

A loaded model then holds about 45 MB, and a query runs faster (its matrix products read a quarter of the
bytes). Quantizing the activations moves a vector by a cosine of about 0.006 on average (tests/
test_meaning.py; the vectors carry a model id of their own, so vectors of the float graph are re-made, never
mixed). The quality figures with this graph are in docs/performance.md ("Meaning").

It works on the protobuf wire format itself (fields copied as bytes, new nodes encoded here) because the
``onnx`` package would cost a server 21 MB of imports for a rewrite it does once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_MODEL_GRAPH = 7  # ModelProto.graph
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5  # GraphProto.node, GraphProto.initializer
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP_TYPE = 1, 2, 4  # NodeProto
_TENSOR_NAME = 8  # TensorProto.name
_ATTRIBUTE_NAME, _ATTRIBUTE_INT, _ATTRIBUTE_TYPE = 1, 3, 20  # AttributeProto
_NODE_ATTRIBUTE = 5
_ATTRIBUTE_TYPE_INT = 2
_FLOAT = 1  # TensorProto.DataType.FLOAT


class GraphError(ValueError):
    """The model is not the protobuf this rewrite expects."""


@dataclass
class Rewritten:
    model: bytes
    matmuls: int  # MatMul nodes now run on int8 weights
    gathers: int  # Gather nodes now gather int8 rows


@dataclass
class _Node:
    op_type: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise GraphError("a varint runs past its message")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes, bytes]]:
    """(number, wire type, value, the field's own bytes with its key) of each field of one message."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise GraphError("a field runs past its message")
            value, pos = data[pos:pos + size], pos + size
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
            value, pos = int.from_bytes(data[pos:pos + width], "little"), pos + width
        else:
            raise GraphError(f"wire type {wire} is not one this rewrite reads")
        yield number, wire, value, data[start:pos]


def encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # protobuf's int64: two's complement in ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | _LEN) + encode_varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return encode_varint(number << 3 | _VARINT) + encode_varint(value)


def _node(op_type: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    """A GraphProto.node field holding a new NodeProto."""
    body = b"".join(_len_field(_NODE_INPUT, name.encode()) for name in inputs)
    body += b"".join(_len_field(_NODE_OUTPUT, name.encode()) for name in outputs)
    body += _len_field(_NODE_OP_TYPE, op_type.encode())
    for name, value in ints.items():
        attribute = (_len_field(_ATTRIBUTE_NAME, name.encode()) + _int_field(_ATTRIBUTE_INT, value)
                     + _int_field(_ATTRIBUTE_TYPE, _ATTRIBUTE_TYPE_INT))
        body += _len_field(_NODE_ATTRIBUTE, attribute)
    return _len_field(_GRAPH_NODE, body)


def _parse_node(data: bytes) -> _Node:
    node = _Node()
    for number, _wire, value, _raw in _fields(data):
        if isinstance(value, bytes):
            if number == _NODE_INPUT:
                node.inputs.append(value.decode())
            elif number == _NODE_OUTPUT:
                node.outputs.append(value.decode())
            elif number == _NODE_OP_TYPE:
                node.op_type = value.decode()
    return node


def _tensor_name(data: bytes) -> str:
    for number, _wire, value, _raw in _fields(data):
        if number == _TENSOR_NAME and isinstance(value, bytes):
            return value.decode()
    return ""


def _int8_matmul(matmul: _Node, weight: str, scale: str) -> bytes:
    """``MatMul(x, Cast(weight) * scale)`` as x quantized on the fly times the int8 weight, then both scales."""
    x, out = matmul.inputs[0], matmul.outputs[0]
    quantized, x_scale, x_zero = f"{out}/xq", f"{out}/xs", f"{out}/xz"
    return b"".join((
        _node("DynamicQuantizeLinear", [x], [quantized, x_scale, x_zero]),
        _node("MatMulInteger", [quantized, weight, x_zero], [f"{out}/i32"]),  # the weight's zero point: 0
        _node("Cast", [f"{out}/i32"], [f"{out}/f32"], to=_FLOAT),
        _node("Mul", [x_scale, scale], [f"{out}/scale"]),
        _node("Mul", [f"{out}/f32", f"{out}/scale"], [out]),
    ))


def _int8_gather(gather: _Node, table: str, scale: str) -> bytes:
    """``Gather(Cast(table) * scale, ids)`` as the int8 rows and their scales gathered, then multiplied."""
    ids, out = gather.inputs[1], gather.outputs[0]
    return b"".join((
        _node("Gather", [table, ids], [f"{out}/q"], axis=0),
        _node("Cast", [f"{out}/q"], [f"{out}/f32"], to=_FLOAT),
        _node("Gather", [scale, ids], [f"{out}/scale"], axis=0),  # per-row scales: shape (rows, 1)
        _node("Mul", [f"{out}/f32", f"{out}/scale"], [out]),
    ))


def int8_graph(model: bytes) -> Rewritten:
    """``model`` (an ONNX ModelProto) with every ``MatMul`` by and ``Gather`` from a dequantized int8 weight
    rewritten as the module docstring says; every other field is kept byte for byte."""
    graph_fields = [(n, v, raw) for n, _w, v, raw in _fields(model) if n == _MODEL_GRAPH]
    if len(graph_fields) != 1 or not isinstance(graph_fields[0][1], bytes):
        raise GraphError("the model holds no single graph")
    graph = list(_fields(graph_fields[0][1]))
    initializers = {_tensor_name(v) for n, _w, v, _raw in graph if n == _GRAPH_INITIALIZER and isinstance(v, bytes)}
    nodes = {i: _parse_node(v) for i, (n, _w, v, _raw) in enumerate(graph)
             if n == _GRAPH_NODE and isinstance(v, bytes)}
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    consumers: dict[str, list[int]] = {}
    for i, node in nodes.items():
        for name in node.inputs:
            consumers.setdefault(name, []).append(i)

    def dequantized(name: str) -> tuple[str, str, list[int]] | None:
        """(the int8 weight, its scale, the Cast and Mul nodes) when ``name`` is ``Cast(weight) * scale``."""
        mul = nodes.get(producer.get(name, -1))
        if mul is None or mul.op_type != "Mul" or len(mul.inputs) != 2 or mul.inputs[1] not in initializers:
            return None
        cast_at = producer.get(mul.inputs[0], -1)
        cast = nodes.get(cast_at)
        if cast is None or cast.op_type != "Cast" or cast.inputs[0] not in initializers:
            return None
        if consumers.get(cast.outputs[0]) != [producer[name]]:
            return None
        return cast.inputs[0], mul.inputs[1], [cast_at, producer[name]]

    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    matmuls = gathers = 0
    for i, node in nodes.items():
        if node.op_type == "MatMul" and len(node.inputs) == 2:
            found = dequantized(node.inputs[1])
            if found and consumers.get(node.inputs[1]) == [i]:
                replaced[i] = _int8_matmul(node, found[0], found[1])
                dropped.update(found[2])
                matmuls += 1
        elif node.op_type == "Gather" and len(node.inputs) == 2:
            found = dequantized(node.inputs[0])
            if found and consumers.get(node.inputs[0]) == [i]:
                replaced[i] = _int8_gather(node, found[0], found[1])
                dropped.update(found[2])
                gathers += 1
    # a replacement stands where the node it replaces stood, so the nodes stay in topological order; the Cast
    # and Mul it drops read initializers only
    body = b"".join(replaced.get(i, b"" if i in dropped else raw) for i, (_n, _w, _v, raw) in enumerate(graph))
    out = b"".join(_len_field(_MODEL_GRAPH, body) if n == _MODEL_GRAPH else raw for n, _w, _v, raw in _fields(model))
    return Rewritten(out, matmuls, gathers)
