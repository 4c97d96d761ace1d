"""Tensors handed between a measuring process and its judge (sitegen.rerun.checks.judge), over a
Unix socket pair, without pickle.

Each message is one JSON header (length-prefixed) naming its kind, its plain payload and, for
each tensor, its dtype and shape; the tensor itself is never copied through the socket but through
a shared-memory file whose descriptor rides along (SCM_RIGHTS), contiguous from its first byte.
A CUDA tensor goes the same way, copied to the host first: a CUDA IPC handle would have the judge
map memory the measuring process names, at offsets and sizes it states and torch does not bound
(a view outside the output's allocation, onto the judge's own references; a reference count
decremented at any distance), and a handle the judge exported would give the measuring process
the judge's whole allocator segment, its references included. Host copies cost a few tenths of
a second per gigabyte each way, next to a gate that takes seconds. These are the primitives
torch.multiprocessing uses for CPU tensors, but torch.multiprocessing's Connection unpickles what
it receives, and a pickle from the measuring process would run its code in the judge: the judge
would no longer be a process that runs no outside code. A header is data, read field by field;
anything else is refused (Refused, one line).

The receiver checks each tensor against what it expects (at most so many tensors, each of at most
so many elements), checks the file's size, and copies it before it acknowledges; the sender blocks
until that acknowledgement, holding the file: what the judge judges is the copy, so an edit of the
measuring process's own tensor after the handover changes nothing the judge holds, and one before
it, or during the copy, is no more than handing over other values.
"""

from __future__ import annotations

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
            # Host shared memory for every device (the module's docstring says why not CUDA IPC);
            # a CUDA output's stream has finished with it (handed over after a device-wide synchronize).
            share = torch.empty(t.shape, dtype=t.dtype).share_memory_()
            share.copy_(t)
            fd, size = share.untyped_storage()._share_fd_cpu_()
            fds.append(fd)
            described.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                              "cpu": {"size": size, "fd": len(fds) - 1}})
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

    def recv(self, device: str, *, ack: bool = True, most: list[int] | None = None) -> tuple[str, dict, list]:
        """(kind, payload, tensors copied onto ``device``): the sender is acknowledged once the
        copies are made (``ack`` False: a sender that does not wait, send(wait=False)). ``most``:
        the most elements of each tensor in order, and so the most tensors (None: no tensor).
        Refused on anything this protocol does not send, before any memory is taken for it;
        EOFError at the end."""
        fds: list[int] = []
        try:
            header, fds = self._read_header(with_fds=True)
            kind, payload, described = header.get("kind"), header.get("payload"), header.get("tensors")
            if not isinstance(kind, str) or not isinstance(payload, dict) or not isinstance(described, list):
                raise Refused("a message without a kind, payload and tensor list")
            bounds = most or []
            if len(described) > len(bounds) and any(d is not None for d in described[len(bounds):]):
                raise Refused(f"{len(described)} tensors where at most {len(bounds)} were expected")
            tensors = [None if d is None else _copy_in(d, fds, device, bounds[i]) for i, d in enumerate(described)]
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
            try:
                prefix = first + self._exact(4 - len(first)) if first else b""
                if len(prefix) < 4:
                    raise EOFError("the other end closed")
                return self._read_body(prefix), fds
            except BaseException:
                for fd in fds:  # refused before recv's own cleanup could see them
                    _close(fd)
                raise
        prefix = self._exact(4)
        if len(prefix) < 4:
            raise EOFError("the other end closed")
        return self._read_body(prefix)

    def _read_body(self, prefix: bytes) -> dict:
        (n,) = struct.unpack("!I", prefix)
        if n > _MAX_HEADER:
            raise Refused(f"a header of {n} bytes (at most {_MAX_HEADER})")
        try:
            header = json.loads(self._exact(n))
        except ValueError:
            raise Refused("a header that is not JSON") from None
        if not isinstance(header, dict):
            raise Refused("a header that is not a JSON object")
        return header

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


def _ints(value, what: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise Refused(f"a tensor {what} that is not a list of non-negative integers")
    return value


def _copy_in(d, fds: list[int], device: str, most: int):
    """The tensor a header describes (at most ``most`` elements), copied out of its shared-memory file."""
    import os

    import torch

    if not isinstance(d, dict) or d.get("dtype") not in _DTYPE_NAMES:
        raise Refused(f"a tensor of dtype {d.get('dtype') if isinstance(d, dict) else d!r}, not one the checks read")
    dtype = getattr(torch, d["dtype"])
    shape = _ints(d.get("shape"), "shape")
    numel = 1
    for n in shape:
        numel *= n
    if numel > most:
        raise Refused(f"a tensor of {numel} elements where at most {most} were expected")
    c = d.get("cpu")
    if not isinstance(c, dict):
        raise Refused("a tensor not in a shared-memory file")
    k, size = c.get("fd"), c.get("size")
    if not (isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(fds) and size == numel * dtype.itemsize):
        raise Refused("a tensor without its shared-memory file, or of another size than its shape")
    try:
        held = os.fstat(fds[k]).st_size
    except OSError as exc:
        raise Refused(f"a shared-memory file that cannot be read: {exc}") from None
    if held < size:  # mapped as it is: torch would otherwise grow the file to the size stated
        raise Refused(f"a shared-memory file of {held} bytes for a tensor of {size}")
    out = torch.empty(shape, dtype=dtype, device=device)
    if size:
        storage = torch.UntypedStorage._new_shared_fd_cpu(fds[k], size)
        out.copy_(torch.empty(0, dtype=dtype).set_(storage, 0, shape))
    return out


def _close(fd: int) -> None:
    import os

    try:
        os.close(fd)
    except OSError:
        pass
