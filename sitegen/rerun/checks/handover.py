"""Tensors handed between a measuring process and its judge (sitegen.rerun.checks.judge), over a
Unix socket pair, without pickle.

Each message is one JSON header (length-prefixed) naming its kind, its plain payload and, for
each tensor, its dtype, shape, stride and storage offset; the storage itself is shared, never
copied through the socket: a CPU tensor as a shared-memory file whose descriptor rides along
(SCM_RIGHTS), a CUDA tensor as its CUDA IPC handle (torch's own, UntypedStorage._share_cuda_).
These are the primitives torch.multiprocessing uses, but torch.multiprocessing's Connection
unpickles what it receives, and a pickle from the measuring process would run its code in the
judge: the judge would no longer be a process that runs no outside code. A header is data, read
field by field; anything else is refused (Refused, one line).

The receiver copies every tensor on receipt, before it acknowledges, and the sender blocks until
that acknowledgement, holding the tensor: what the judge judges is the copy, so an edit of the
measuring process's own tensor after the handover changes nothing the judge holds, and one before
it is no more than handing over other values.
"""

from __future__ import annotations

import base64
import json
import socket
import struct

_MAX_HEADER = 1 << 20
_MAX_FDS = 64
# The dtypes a header may name (torch's own names); torch is imported only where a tensor is
# handed over, so that the rerun's parent, which reads the judge's verdicts through a Channel,
# never imports it.
_DTYPE_NAMES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


class Refused(ValueError):
    """A message that is not what this protocol sends (the message is one line)."""


class Channel:
    """One end of a socket pair: send() blocks until the other end has copied what it was sent."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def close(self) -> None:
        self.sock.close()

    # -- sending --------------------------------------------------------------------------------

    def send(self, kind: str, payload: dict | None = None, tensors=(), *, wait: bool = True) -> None:
        """Hand over ``tensors`` (None allowed) with a plain payload; returns once they are copied.
        ``wait`` False: a message of no tensors left in the socket for a receiver that may read it
        only after this end has gone (the judge's verdicts, read by the parent), not acknowledged."""
        held, described, fds = [], [], []
        if tensors:
            import torch
        for t in tensors:
            if t is None:
                described.append(None)
                continue
            t = t.detach()
            if t.device.type == "cuda":
                # The output's own storage: the judge copies it on receipt. The caller's stream
                # has finished with it (handed over after a device-wide synchronize).
                dev, handle, size, offset, ref_handle, ref_offset, event, sync = t.untyped_storage()._share_cuda_()
                described.append({**_layout(t), "cuda": {
                    "device": dev, "handle": _b64(handle), "size": size, "offset": offset,
                    "refHandle": _b64(ref_handle), "refOffset": ref_offset, "event": _b64(event), "sync": bool(sync)}})
            else:
                share = torch.empty(t.shape, dtype=t.dtype).share_memory_()
                share.copy_(t)
                fd, size = share.untyped_storage()._share_fd_cpu_()
                fds.append(fd)
                described.append({**_layout(share), "cpu": {"size": size, "fd": len(fds) - 1}})
                t = share
            held.append(t)
        self._write({"kind": kind, "payload": payload or {}, "tensors": described}, fds)
        if not wait:
            if held:
                raise ValueError("tensors are handed over only to a receiver that acknowledges")
            return
        ack = self._read_header()
        if ack.get("kind") != "ack":
            raise Refused(f"expected an acknowledgement, got {ack.get('kind')!r}")
        del held  # kept alive and unchanged by this end until the copy was acknowledged

    def _write(self, header: dict, fds: list[int]) -> None:
        body = json.dumps(header, separators=(",", ":")).encode()
        data = struct.pack("!I", len(body)) + body
        if fds:
            socket.send_fds(self.sock, [data[:4]], fds)
            self.sock.sendall(data[4:])
        else:
            self.sock.sendall(data)

    # -- receiving ------------------------------------------------------------------------------

    def recv(self, device: str, *, ack: bool = True) -> tuple[str, dict, list]:
        """(kind, payload, tensors copied onto ``device``): the sender is acknowledged once the
        copies are made (``ack`` False: a sender that does not wait, send(wait=False)). Refused
        on anything this protocol does not send; EOFError at the end."""
        header, fds = self._read_header(with_fds=True)
        try:
            kind, payload, described = header.get("kind"), header.get("payload"), header.get("tensors")
            if not isinstance(kind, str) or not isinstance(payload, dict) or not isinstance(described, list):
                raise Refused("a message without a kind, payload and tensor list")
            tensors = [None if d is None else _copy_in(d, fds, device) for d in described]
            if device.startswith("cuda") and any(t is not None for t in tensors):
                import torch

                torch.cuda.synchronize()  # the copies complete before the sender may touch its own
        finally:
            for fd in fds:
                _close(fd)
        if ack:
            self._write({"kind": "ack"}, [])
        return kind, payload, tensors

    def _read_header(self, with_fds: bool = False):
        if with_fds:
            first, fds, _, _ = socket.recv_fds(self.sock, 4, _MAX_FDS)
            prefix = first + self._exact(4 - len(first)) if first else b""
        else:
            fds, prefix = [], self._exact(4)
        if len(prefix) < 4:
            raise EOFError("the other end closed")
        (n,) = struct.unpack("!I", prefix)
        if n > _MAX_HEADER:
            raise Refused(f"a header of {n} bytes (at most {_MAX_HEADER})")
        try:
            header = json.loads(self._exact(n))
        except ValueError:
            raise Refused("a header that is not JSON") from None
        if not isinstance(header, dict):
            raise Refused("a header that is not a JSON object")
        return (header, fds) if with_fds else header

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            part = self.sock.recv(n - len(out))
            if not part:
                if out:
                    raise Refused("a message cut short")
                return out
            out += part
        return out


def _layout(t) -> dict:
    return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "stride": list(t.stride()),
            "storageOffset": t.storage_offset()}


def _b64(value) -> str | None:
    return None if value is None else base64.b64encode(bytes(value)).decode()


def _unb64(value) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Refused("a CUDA handle that is not a string")
    return base64.b64decode(value, validate=True)


def _ints(value, what: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise Refused(f"a tensor {what} that is not a list of non-negative integers")
    return value


def _copy_in(d, fds: list[int], device: str):
    """The tensor a header describes, copied out of the shared storage."""
    import torch

    if not isinstance(d, dict) or d.get("dtype") not in _DTYPE_NAMES:
        raise Refused(f"a tensor of dtype {d.get('dtype') if isinstance(d, dict) else d!r}, not one the checks read")
    dtype = getattr(torch, d["dtype"])
    shape, stride = _ints(d.get("shape"), "shape"), _ints(d.get("stride"), "stride")
    offset = d.get("storageOffset")
    if len(shape) != len(stride) or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise Refused("a tensor layout whose shape, stride and offset do not agree")
    if isinstance(d.get("cpu"), dict):
        c = d["cpu"]
        k, size = c.get("fd"), c.get("size")
        if not (isinstance(k, int) and 0 <= k < len(fds) and isinstance(size, int) and size >= 0):
            raise Refused("a CPU tensor without its shared-memory file")
        storage = torch.UntypedStorage._new_shared_fd_cpu(fds[k], size)
    elif isinstance(d.get("cuda"), dict):
        c = d["cuda"]
        nums = [c.get(key) for key in ("device", "size", "offset", "refOffset")]
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in nums):
            raise Refused("a CUDA tensor whose handle's numbers are not non-negative integers")
        torch.cuda._lazy_init()
        storage = torch.UntypedStorage._new_shared_cuda(c["device"], _unb64(c.get("handle")), c["size"], c["offset"],
                                                        _unb64(c.get("refHandle")), c["refOffset"],
                                                        _unb64(c.get("event")), bool(c.get("sync")))
    else:
        raise Refused("a tensor neither in shared memory nor behind a CUDA IPC handle")
    extent = offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1 if all(shape) else 0
    if extent * dtype.itemsize > storage.nbytes():
        raise Refused(f"a tensor reaching past its storage ({extent * dtype.itemsize} of {storage.nbytes()} bytes)")
    view = torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, shape, stride)
    return torch.empty(shape, dtype=dtype, device=device).copy_(view)


def _close(fd: int) -> None:
    import os

    try:
        os.close(fd)
    except OSError:
        pass
