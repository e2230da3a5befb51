"""The pinned model's graph, rewritten so that its weights stay int8 while it runs.

The model file holds each weight as int8 with a float scale, turned back into float32 by a ``Cast`` and a
``Mul`` in the graph. onnxruntime folds those two into float32 constants when it loads the model, so a loaded
model held 157 MB: 91 MB of float32 weights (47 MB of them the word-piece table) beside the int8 ones. This
rewrite changes only what consumes a weight, never a weight:

- a ``MatMul`` by an int8 weight with one scale per output column becomes ``DynamicQuantizeLinear`` of its
  input, ``MatMulInteger`` and the two scales (a pattern onnxruntime fuses into its int8 kernels,
  ``DynamicQuantizeMatMul`` and ``MatMulIntegerToFloat``);
- a ``Gather`` (on axis 0) from an int8 table with one scale per row (the word-piece and position embeddings)
  gathers the int8 rows and their scales, then multiplies: the same numbers as before, without a float32
  copy of the table.

Any other use of a weight is left as it was. A loaded model then holds 47 MB, and a query runs faster (its
matrix products read a quarter of the bytes). Quantizing the activations moves a vector a little (a cosine of
0.99 to the float graph's on average; tests/test_int8_graph.py), so the vectors carry a model id of their own
and the float graph's are made again, never mixed (docs/memory.md, "The model").

It works on the protobuf wire format itself (fields kept as slices of the file, new nodes encoded here)
because the ``onnx`` package would cost a server 21 MB of imports for a rewrite it does once; the file is
read without copies, so the rewrite needs the size of its answer and little more.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_MODEL_GRAPH = 7  # ModelProto.graph
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT = 1, 5, 12  # GraphProto
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP_TYPE, _NODE_ATTRIBUTE = 1, 2, 4, 5  # NodeProto
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME = 1, 2, 8  # TensorProto
_VALUE_INFO_NAME = 1  # ValueInfoProto.name
_ATTRIBUTE_NAME, _ATTRIBUTE_INT, _ATTRIBUTE_TYPE = 1, 3, 20  # AttributeProto
_ATTRIBUTE_TYPE_INT = 2
_FLOAT, _INT8 = 1, 3  # TensorProto.DataType


class GraphError(ValueError):
    """The model is not the protobuf this rewrite expects."""


@dataclass
class Rewritten:
    """The rewritten model's bytes, and how many of its nodes now run on int8 weights."""

    model: bytes
    matmuls: int
    gathers: int


@dataclass
class _Node:
    op_type: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    ints: dict[str, int] = field(default_factory=dict)  # its integer attributes


@dataclass
class _Tensor:
    data_type: int = 0
    dims: list[int] = field(default_factory=list)


@dataclass
class _Field:
    number: int
    value: int | memoryview  # a varint's or fixed field's number, or a length-delimited field's bytes
    raw: memoryview  # the whole field, key included


def _varint(data: memoryview | bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise GraphError("a varint runs past its message or past 64 bits")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value >> 64:
                raise GraphError("a varint is wider than 64 bits")
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Iterator[_Field]:
    """Each field of one message, as slices of ``data`` (nothing copied)."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise GraphError("a field numbered 0")
        value: int | memoryview
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise GraphError("a field runs past its message")
            value, pos = data[pos:pos + size], pos + size
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
            if pos + width > len(data):
                raise GraphError("a fixed-width field runs past its message")
            value, pos = int.from_bytes(data[pos:pos + width], "little"), pos + width
        else:
            raise GraphError(f"wire type {wire} is not one this rewrite reads")
        yield _Field(number, value, data[start:pos])


def _text(value: int | memoryview) -> str:
    if not isinstance(value, memoryview):
        raise GraphError("a string field holds a number")
    try:
        return str(value, "utf-8")
    except UnicodeDecodeError:
        raise GraphError("a name is not UTF-8") from None


def _message(value: int | memoryview) -> memoryview:
    if not isinstance(value, memoryview):
        raise GraphError("a message field holds a number")
    return value


def encode_varint(value: int) -> bytes:
    """``value`` as a protobuf varint; a negative one as int64 (ten bytes of two's complement)."""
    if value < 0:
        value += 1 << 64
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


def _parse_node(data: memoryview) -> _Node:
    node = _Node()
    for f in _fields(data):
        if f.number == _NODE_INPUT:
            node.inputs.append(_text(f.value))
        elif f.number == _NODE_OUTPUT:
            node.outputs.append(_text(f.value))
        elif f.number == _NODE_OP_TYPE:
            node.op_type = _text(f.value)
        elif f.number == _NODE_ATTRIBUTE:
            name, number = "", None
            for a in _fields(_message(f.value)):
                if a.number == _ATTRIBUTE_NAME:
                    name = _text(a.value)
                elif a.number == _ATTRIBUTE_INT and isinstance(a.value, int):
                    number = a.value - (1 << 64) if a.value >> 63 else a.value
            if number is not None:
                node.ints[name] = number
    return node


def _parse_tensor(data: memoryview) -> tuple[str, _Tensor]:
    """An initializer's name, type and shape (its data is not read)."""
    name, tensor = "", _Tensor()
    for f in _fields(data):
        if f.number == _TENSOR_NAME:
            name = _text(f.value)
        elif f.number == _TENSOR_DATA_TYPE and isinstance(f.value, int):
            tensor.data_type = f.value
        elif f.number == _TENSOR_DIMS:
            if isinstance(f.value, int):
                tensor.dims.append(f.value)
            else:  # packed
                pos = 0
                while pos < len(f.value):
                    dim, pos = _varint(f.value, pos)
                    tensor.dims.append(dim)
    return name, tensor


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


class _Graph:
    """The nodes, initializers and outputs of one GraphProto, and who produces and consumes what."""

    def __init__(self, data: memoryview) -> None:
        self.fields = list(_fields(data))
        self.tensors = dict(_parse_tensor(_message(f.value)) for f in self.fields if f.number == _GRAPH_INITIALIZER)
        self.outputs = {_text(v.value) for f in self.fields if f.number == _GRAPH_OUTPUT
                        for v in _fields(_message(f.value)) if v.number == _VALUE_INFO_NAME}
        self.nodes = {i: _parse_node(_message(f.value)) for i, f in enumerate(self.fields) if f.number == _GRAPH_NODE}
        self.producer = {out: i for i, node in self.nodes.items() for out in node.outputs}
        self.consumers: dict[str, list[int]] = {}
        for i, node in self.nodes.items():
            for name in node.inputs:
                self.consumers.setdefault(name, []).append(i)

    def dequantized(self, name: str, user: int) -> tuple[str, _Tensor, str, _Tensor, list[int]] | None:
        """(the int8 weight, its shape, its scale, the scale's shape, the Cast and Mul nodes) when ``name`` is
        ``Cast(weight) * scale`` used by node ``user`` alone."""
        mul_at = self.producer.get(name, -1)
        mul = self.nodes.get(mul_at)
        if mul is None or mul.op_type != "Mul" or len(mul.inputs) != 2 or mul.inputs[1] not in self.tensors:
            return None
        cast_at = self.producer.get(mul.inputs[0], -1)
        cast = self.nodes.get(cast_at)
        if cast is None or cast.op_type != "Cast" or cast.ints.get("to") != _FLOAT or not cast.inputs:
            return None
        weight = self.tensors.get(cast.inputs[0])
        if weight is None or weight.data_type != _INT8:
            return None
        if self.consumers.get(cast.outputs[0]) != [mul_at] or self.consumers.get(name) != [user]:
            return None
        if {cast.outputs[0], name} & self.outputs:
            return None
        return cast.inputs[0], weight, mul.inputs[1], self.tensors[mul.inputs[1]], [cast_at, mul_at]


def int8_graph(model: bytes) -> Rewritten:
    """``model`` (an ONNX ModelProto) with each ``MatMul`` by and ``Gather`` from a dequantized int8 weight
    rewritten as the module docstring says, where the scales' shapes allow it; every other field is kept byte
    for byte."""
    top = list(_fields(memoryview(model)))
    graphs = [f for f in top if f.number == _MODEL_GRAPH]
    if len(graphs) != 1:
        raise GraphError("the model holds no single graph")
    graph = _Graph(_message(graphs[0].value))
    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    matmuls = gathers = 0
    for i, node in graph.nodes.items():
        if node.op_type == "MatMul" and len(node.inputs) == 2 and len(node.outputs) == 1:
            found = graph.dequantized(node.inputs[1], i)
            # the scale moves past the product: only one per output column (or one in all) commutes with it
            if found and len(found[1].dims) == 2 and found[3].dims in ([], [1], [found[1].dims[1]],
                                                                       [1, found[1].dims[1]]):
                replaced[i] = _int8_matmul(node, found[0], found[2])
                dropped.update(found[4])
                matmuls += 1
        elif node.op_type == "Gather" and len(node.inputs) == 2 and node.ints.get("axis", 0) == 0:
            found = graph.dequantized(node.inputs[0], i)
            if found and len(found[1].dims) == 2 and found[3].dims == [found[1].dims[0], 1]:
                replaced[i] = _int8_gather(node, found[0], found[2])
                dropped.update(found[4])
                gathers += 1
    # a replacement stands where the node it replaces stood, so the nodes stay in topological order; the Cast
    # and Mul it drops read initializers only
    body: list[bytes | memoryview] = [replaced.get(i, b"" if i in dropped else f.raw)
                                      for i, f in enumerate(graph.fields)]
    size = sum(len(piece) for piece in body)
    pieces: list[bytes | memoryview] = []
    for f in top:
        if f.number == _MODEL_GRAPH:
            pieces += [encode_varint(_MODEL_GRAPH << 3 | _LEN), encode_varint(size), *body]
        else:
            pieces.append(f.raw)
    return Rewritten(b"".join(pieces), matmuls, gathers)
