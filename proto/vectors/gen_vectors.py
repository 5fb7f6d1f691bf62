#!/usr/bin/env python3
"""Writes vectors.txt: pinned MetaRoCE v1 datagrams (docs/spec.md §3, §4).

This generator is an independent implementation of the wire format, written
from docs/spec.md with Python's struct and zlib only; it shares no code with
the Rust crates. The committed vectors.txt is the reference: the Rust tests
(proto/tests/vectors.rs), the compliance suite and the Wireshark dissector
check themselves against it. Re-running this script must reproduce the file
byte for byte (`python3 proto/vectors/gen_vectors.py --check`).
"""
import ipaddress
import struct
import sys
import zlib
from pathlib import Path

OPS = {"WRITE": 0x01, "WRITE_IMM": 0x02, "SEND": 0x03, "SEND_IMM": 0x04,
       "READ_REQ": 0x05, "READ_RESP": 0x06, "FETCH_ADD": 0x08, "COMPARE_SWAP": 0x09,
       "ATOMIC_RESP": 0x0A, "ACK": 0x10, "NACK": 0x11,
       "PROBE": 0x12, "MULTI_ACK": 0x13, "PARITY": 0x14, "CONNECT": 0x20, "CONNECT_ACK": 0x21, "DISCONNECT": 0x22}
MSG_OPS = {"WRITE", "WRITE_IMM", "SEND", "SEND_IMM", "READ_REQ", "READ_RESP", "FETCH_ADD", "COMPARE_SWAP",
           "ATOMIC_RESP", "PARITY"}
CM_OPS = {"CONNECT", "CONNECT_ACK", "DISCONNECT"}


def mapped(ip):
    a = ipaddress.ip_address(ip)
    if a.version == 4:
        return b"\x00" * 10 + b"\xff\xff" + a.packed
    return a.packed


def split_addr(s):
    host, port = s.rsplit(":", 1)
    return host.strip("[]"), int(port)


def pseudo(src, dst, udp_payload_len):
    sip, sport = split_addr(src)
    dip, dport = split_addr(dst)
    udp_len = min(8 + udp_payload_len, 65535)
    return mapped(sip) + mapped(dip) + struct.pack(">HHHH", sport, dport, udp_len, 0)


def base(v):
    op = v["opcode"]
    return struct.pack(">BBHIIHHIIQ", v.get("version", 1), OPS.get(op, op), v.get("flags", 0),
                       v.get("dst_qpn", 0), v.get("src_qpn", 0), v.get("stream", 0),
                       v.get("path", 0), v.get("conn_psn", 0), v.get("path_psn", 0),
                       v.get("timestamp", 0))


def ext(v):
    op = v["opcode"]
    if not isinstance(op, str):
        op = "WRITE"  # an unknown opcode on an otherwise intact WRITE
    if op in MSG_OPS:
        return struct.pack(">IIIIQII", v.get("msn", 0), v.get("recv_idx", 0), v.get("msg_len", 0),
                           v.get("offset", 0), v.get("remote_va", 0), v.get("rkey", 0), v.get("imm", 0))
    if op == "ACK":
        sack = bytearray(32)
        for i in v.get("sack_bits", []):
            sack[i // 8] |= 1 << (i % 8)
        return (struct.pack(">II", v.get("conn_cum", 0), v.get("path_cum", 0)) + bytes(sack)
                + struct.pack(">QIIII", v.get("echo_ts", 0), v.get("ce_count", 0), v.get("rate_hint", 0),
                              v.get("credit", 0), v.get("rx_count", 0)))
    if op == "MULTI_ACK":
        return struct.pack(">IIIB3x", v.get("conn_cum", 0), v.get("credit", 0), v.get("rate_hint", 0),
                           v["count"])
    if op == "NACK":
        return struct.pack(">B3xIII", v["reason"], v.get("nack_conn_psn", 0), v.get("nack_msn", 0),
                           v.get("detail", 0))
    if op in CM_OPS:
        return struct.pack(">IHHIII12x", v.get("init_conn_psn", 0), v.get("paths", 0), v.get("streams", 0),
                           v.get("mtu", 0), v.get("cm_credit", 0), v.get("line_rate", 0))
    return b""


def entries(es):
    """A MULTI_ACK's path entries (§3.11): 24 bytes each, then the SACK bytes up
    to the last non-zero one."""
    out = b""
    for e in es:
        sack = bytearray(32)
        for i in e.get("sack_bits", []):
            sack[i // 8] |= 1 << (i % 8)
        n = max((i for i, b in enumerate(sack) if b), default=-1) + 1
        out += struct.pack(">BBBxIQII", e["path"], e.get("ece", 0), n, e.get("path_cum", 0),
                           e.get("echo_ts", 0), e.get("ce_count", 0), e.get("rx_count", 0)) + bytes(sack[:n])
    return out


MULTI_ACK = dict(opcode="MULTI_ACK", dst_qpn=0x11, src_qpn=0x22, timestamp=5_000_000_100, conn_cum=0x1001,
                 credit=4096, rate_hint=100_000, count=2,
                 payload=entries([dict(path=3, path_cum=6, echo_ts=1_000_000_000, rx_count=6),
                                  dict(path=63, ece=1, path_cum=6, sack_bits=[1, 2, 10], echo_ts=0x1122334455667788,
                                       ce_count=1, rx_count=9)]),
                 src="10.0.0.2:50010", dst="10.0.0.1:4798")


def build(v):
    body = base(v) + ext(v) + bytes(v.get("payload", b""))
    L = len(body) + 4
    icrc = zlib.crc32(pseudo(v["src"], v["dst"], L) + body) & 0xFFFFFFFF
    if v.get("corrupt_icrc"):
        icrc ^= 0x00000100
    return body + struct.pack(">I", icrc), icrc


SPEC_WRITE = dict(opcode="WRITE", flags=0x0007, dst_qpn=0x22, src_qpn=0x11, stream=0, path=3,
                  conn_psn=0x1000, path_psn=5, timestamp=1_000_000_000, msn=0, msg_len=16,
                  remote_va=0x00007F0000001000, rkey=0x00ABCDEF, payload=bytes(range(16)),
                  src="10.0.0.1:50010", dst="10.0.0.2:4798")

VALID = [
    ("spec_3_10_write", "3.10", SPEC_WRITE),
    ("spec_3_10_write_port_50011", "3.10, 4", dict(SPEC_WRITE, src="10.0.0.1:50011")),
    ("spec_3_10_ack", "3.10", dict(opcode="ACK", dst_qpn=0x11, src_qpn=0x22, path=3,
                                   timestamp=5_000_000_000, conn_cum=0x1001, path_cum=6,
                                   echo_ts=1_000_000_000, rate_hint=100_000, credit=4096, rx_count=6,
                                   src="10.0.0.2:50010", dst="10.0.0.1:4798")),
    ("ack_sack_example", "3.5", dict(opcode="ACK", flags=0x0020, dst_qpn=0x11, src_qpn=0x22, path=63,
                                     timestamp=0x0102030405060708, conn_cum=0xFFFFFFFE, path_cum=6,
                                     sack_bits=[1, 2, 10, 255], echo_ts=0x1122334455667788,
                                     ce_count=0x80000001, rate_hint=25_000, credit=64, rx_count=0xDEADBEEF,
                                     src="192.0.2.2:65535", dst="192.0.2.1:4798")),
    ("multi_ack_two_paths", "3.11", MULTI_ACK),
    # A PARITY over the last two packets of a 40-byte WRITE cut into 16-byte
    # packets: conn PSNs 0x101 and 0x102, offsets 16 and 32, the second 8 bytes.
    ("parity_two_packets", "3.12", dict(opcode="PARITY", flags=0x0040, dst_qpn=0x10, src_qpn=0x11,
                                        path=9, conn_psn=0x101, path_psn=0x33, timestamp=0x1234,
                                        msn=7, recv_idx=2, msg_len=40, offset=16,
                                        remote_va=0x7F0000001000 + 16, rkey=0xABCDEF,
                                        payload=bytes(((16 + i) ^ ((32 + i) if i < 8 else 0)) & 0xFF
                                                      for i in range(16)),
                                        src="10.0.0.1:50009", dst="10.0.0.2:4798")),
    ("write_middle_packet", "3.4", dict(opcode="WRITE", flags=0x0008, dst_qpn=0x10, src_qpn=0x7FFFFFFF,
                                        stream=15, path=7, conn_psn=0xFFFFFFFF, path_psn=0x80000000,
                                        timestamp=0xFEDCBA9876543210, msn=0x01020304, msg_len=12288,
                                        offset=4096, remote_va=0x123456789ABCD000 + 4096, rkey=0x0A0B0C0D,
                                        payload=bytes((i * 7 + 3) & 0xFF for i in range(24)),
                                        src="192.0.2.1:49159", dst="192.0.2.2:4798")),
    ("write_zero_length", "3.4, 5.2", dict(opcode="WRITE", flags=0x0007, dst_qpn=0x10, src_qpn=0x11,
                                          conn_psn=1, path_psn=0, timestamp=1, msn=1, msg_len=0,
                                          remote_va=0x1000, rkey=0x2000,
                                          src="192.0.2.1:49152", dst="192.0.2.2:4798")),
    ("write_imm_last", "3.4", dict(opcode="WRITE_IMM", flags=0x0016, dst_qpn=0x20, src_qpn=0x21, stream=2,
                                   path=1, conn_psn=0x2000, path_psn=17, timestamp=12345, msn=9,
                                   recv_idx=4, msg_len=4100, offset=4096, remote_va=0x7000_1000,
                                   rkey=0x55, imm=0xCAFEBABE, payload=b"tail",
                                   src="192.0.2.1:50001", dst="192.0.2.2:4798")),
    ("send_first", "3.4", dict(opcode="SEND", flags=0x0001, dst_qpn=0x30, src_qpn=0x31, stream=1, path=2,
                               conn_psn=0x3000, path_psn=2, timestamp=777, msn=3, recv_idx=3, msg_len=40,
                               payload=b"MetaRoCE send, first packet",
                               src="192.0.2.1:50002", dst="192.0.2.2:4798")),
    ("send_imm_solicited", "3.4", dict(opcode="SEND_IMM", flags=0x0017, dst_qpn=0x30, src_qpn=0x31, path=0,
                                       conn_psn=0x3001, path_psn=3, timestamp=778, msn=4, recv_idx=4,
                                       msg_len=5, imm=0x01020304, payload=b"hello",
                                       src="192.0.2.1:50002", dst="192.0.2.2:4798")),
    ("read_req", "3.4, 6.8", dict(opcode="READ_REQ", flags=0x0007, dst_qpn=0x40, src_qpn=0x41, stream=3,
                                  path=5, conn_psn=0x4000, path_psn=99, timestamp=4242, msn=11,
                                  msg_len=1 << 20, remote_va=0x0000_7F00_0010_0000, rkey=0x77,
                                  src="192.0.2.1:50005", dst="192.0.2.2:4798")),
    ("read_resp", "3.4, 6.8", dict(opcode="READ_RESP", flags=0x0002, dst_qpn=0x41, src_qpn=0x40, stream=3,
                                   path=4, conn_psn=0x9000, path_psn=12, timestamp=4343, msn=11,
                                   msg_len=1 << 20, offset=(1 << 20) - 8, rkey=0x77,
                                   payload=bytes([0xA5] * 8),
                                   src="192.0.2.2:50004", dst="192.0.2.1:4798")),
    # Atomics (§3.3, §6.8): operands and the value found, big-endian, as the payload.
    ("fetch_add", "3.3, 3.4, 6.8", dict(opcode="FETCH_ADD", flags=0x0007, dst_qpn=0x50, src_qpn=0x51,
                                        path=2, conn_psn=0x5000, path_psn=40, timestamp=5151, msn=21,
                                        msg_len=8, remote_va=0x0000_7F00_0020_0008, rkey=0x99,
                                        imm=0x6000, payload=struct.pack(">Q", 0x0102030405060708),
                                        src="192.0.2.1:50006", dst="192.0.2.2:4798")),
    ("compare_swap", "3.3, 3.4, 6.8", dict(opcode="COMPARE_SWAP", flags=0x0007, dst_qpn=0x50,
                                           src_qpn=0x51, stream=1, path=3, conn_psn=0x5001, path_psn=41,
                                           timestamp=5152, msn=22, msg_len=8, remote_va=0x0000_7F00_0020_0010,
                                           rkey=0x99, imm=0x6000,
                                           payload=struct.pack(">QQ", 0xFFFFFFFFFFFFFFFF, 42),
                                           src="192.0.2.1:50007", dst="192.0.2.2:4798")),
    ("atomic_resp", "3.3, 3.4, 6.8", dict(opcode="ATOMIC_RESP", flags=0x0007, dst_qpn=0x51, src_qpn=0x50,
                                          path=1, conn_psn=0x6000, path_psn=7, timestamp=6161, msn=21,
                                          msg_len=8, rkey=0x99, payload=struct.pack(">Q", 1000),
                                          src="192.0.2.2:50008", dst="192.0.2.1:4798")),
    ("nack_rnr", "3.6", dict(opcode="NACK", dst_qpn=0x31, src_qpn=0x30, stream=1, timestamp=999,
                             reason=1, nack_conn_psn=0x3000, nack_msn=3, detail=100,
                             src="192.0.2.2:50002", dst="192.0.2.1:4798")),
    ("nack_remote_access", "3.6", dict(opcode="NACK", dst_qpn=0x11, src_qpn=0x22, timestamp=1000,
                                       reason=2, nack_conn_psn=0x1000, nack_msn=0,
                                       src="192.0.2.2:50010", dst="192.0.2.1:4798")),
    ("nack_invalid_request", "3.6", dict(opcode="NACK", dst_qpn=0x11, src_qpn=0x22, stream=4, timestamp=1001,
                                         reason=3, nack_conn_psn=0x1234, nack_msn=7,
                                         src="192.0.2.2:50010", dst="192.0.2.1:4798")),
    ("nack_remote_operational", "3.6", dict(opcode="NACK", dst_qpn=0x11, src_qpn=0x22, timestamp=1002,
                                            reason=4, nack_conn_psn=0x1235, nack_msn=8,
                                            src="192.0.2.2:50010", dst="192.0.2.1:4798")),
    ("probe", "3.7", dict(opcode="PROBE", flags=0x0004, dst_qpn=0x22, src_qpn=0x11, path=6, conn_psn=0x1000,
                          path_psn=300,
                          timestamp=2_000_000_000, src="10.0.0.1:61234", dst="10.0.0.2:4798")),
    ("connect", "3.8", dict(opcode="CONNECT", dst_qpn=0x22, src_qpn=0x11, timestamp=1, init_conn_psn=0xABCDEF,
                            paths=8, streams=16, mtu=4096, cm_credit=4096, line_rate=100_000,
                            src="10.0.0.1:49152", dst="10.0.0.2:4798")),
    ("connect_ack", "3.8", dict(opcode="CONNECT_ACK", dst_qpn=0x11, src_qpn=0x22, timestamp=2,
                                init_conn_psn=0x123456, paths=64, streams=1, mtu=1404, cm_credit=64,
                                line_rate=400_000, src="10.0.0.2:49153", dst="10.0.0.1:4798")),
    ("disconnect", "3.8, 9.4", dict(opcode="DISCONNECT", dst_qpn=0x22, src_qpn=0x11, timestamp=3,
                                    src="10.0.0.1:50010", dst="10.0.0.2:4798")),
    ("write_ipv6", "4", dict(opcode="WRITE", flags=0x0007, dst_qpn=0x10, src_qpn=0x10, path=1, conn_psn=5,
                             path_psn=6, timestamp=7, msn=8, msg_len=3, remote_va=0xFFFF_FFFF_FFFF_FFF0,
                             rkey=0xFFFFFFFF, payload=b"v6!",
                             src="[2001:db8::1]:52000", dst="[2001:db8::2]:4798")),
]

# Invalid datagrams and the first check of §6.2 they fail.
INVALID = [
    ("bad_icrc", "4, 6.2 step 6", "bad_icrc", dict(SPEC_WRITE, corrupt_icrc=True)),
    ("bad_version", "1.4, 6.2 step 2", "bad_version", dict(SPEC_WRITE, version=2)),
    ("truncated_35_bytes", "2.6, 6.2 step 1", "truncated", build(SPEC_WRITE)[0][:35]),
    ("truncated_extension", "2.6, 6.2 step 4", "truncated", build(SPEC_WRITE)[0][:67]),
    ("bad_opcode", "3.3, 6.2 step 3", "bad_opcode", dict(SPEC_WRITE, opcode=0x07)),
    ("probe_with_payload", "2.6, 6.2 step 5", "bad_format",
     dict(opcode="PROBE", flags=0x0004, dst_qpn=0x22, src_qpn=0x11, path=6, path_psn=1, payload=b"xx",
          src="10.0.0.1:61234", dst="10.0.0.2:4798")),
    ("read_req_with_payload", "2.6, 6.2 step 5", "bad_format",
     dict(opcode="READ_REQ", flags=0x0007, dst_qpn=0x22, src_qpn=0x11, msg_len=4, payload=b"\x00",
          src="10.0.0.1:61234", dst="10.0.0.2:4798")),
    ("multi_ack_repeated_path", "3.11, 6.2 step 7", "bad_format",
     dict(MULTI_ACK, payload=entries([dict(path=5), dict(path=5)]))),
    ("multi_ack_trailing_byte", "3.11, 6.2 step 7", "bad_format", dict(MULTI_ACK, payload=MULTI_ACK["payload"] + b"\0")),
    ("multi_ack_no_entries", "3.11, 6.2 step 7", "bad_format", dict(MULTI_ACK, count=0, payload=b"")),
    ("nack_bad_reason", "3.6, 6.2 step 7", "bad_format",
     dict(opcode="NACK", dst_qpn=0x11, src_qpn=0x22, reason=5, src="10.0.0.2:50010", dst="10.0.0.1:4798")),
]


def hexline(b):
    return " ".join(f"{x:02x}" for x in b)


FIELDS = ["version", "opcode", "flags", "dst_qpn", "src_qpn", "stream", "path", "conn_psn", "path_psn",
          "timestamp", "msn", "recv_idx", "msg_len", "offset", "remote_va", "rkey", "imm", "conn_cum",
          "path_cum", "sack_bits", "echo_ts", "ce_count", "rate_hint", "credit", "rx_count", "reason",
          "nack_conn_psn", "nack_msn", "detail", "init_conn_psn", "paths", "streams", "mtu", "cm_credit",
          "line_rate", "count"]


def render():
    out = [
        "# MetaRoCE v1 pinned test vectors (docs/spec.md §3, §4). Generated by gen_vectors.py,",
        "# an implementation independent of the Rust crates; do not edit by hand.",
        "#",
        "# One [section] per datagram. src/dst: the UDP source and destination (the ICRC",
        "# pseudo-header). expect: ok, or the first §6.2 check the datagram fails.",
        "# Field lines give the header values (integers, 0x.. hex; sack_bits: the set",
        "# bit indices). udp_payload: the whole UDP payload in hex, ICRC included.",
        "",
    ]
    for name, spec, expect, v in [(n, s, "ok", v) for n, s, v in VALID] + INVALID:
        out.append(f"[{name}]")
        out.append(f"spec = {spec}")
        out.append(f"expect = {expect}")
        if isinstance(v, bytes):
            out.append(f"src = {SPEC_WRITE['src']}")
            out.append(f"dst = {SPEC_WRITE['dst']}")
            out.append(f"udp_payload = {hexline(v)}")
            out.append("")
            continue
        data, icrc = build(v)
        out.append(f"src = {v['src']}")
        out.append(f"dst = {v['dst']}")
        for f in FIELDS:
            if f == "opcode":
                op = v["opcode"]
                out.append(f"opcode = {op if isinstance(op, str) else hex(op)}")
            elif f == "version":
                out.append(f"version = {v.get('version', 1)}")
            elif f in v:
                val = v[f]
                if f == "sack_bits":
                    out.append(f"sack_bits = {' '.join(str(i) for i in val)}")
                elif isinstance(val, int) and val > 9:
                    out.append(f"{f} = {val:#x}")
                else:
                    out.append(f"{f} = {val}")
        out.append(f"payload_len = {len(v.get('payload', b''))}")
        out.append(f"icrc = {icrc:#010x}")
        out.append(f"udp_payload = {hexline(data)}")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    path = Path(__file__).with_name("vectors.txt")
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if path.read_text() == text else "vectors.txt differs from gen_vectors.py's output")
    path.write_text(text)
