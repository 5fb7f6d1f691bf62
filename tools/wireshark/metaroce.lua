-- Wireshark dissector for the MetaRoCE wire protocol v1 (docs/spec.md of
-- MetaRoCE-in-Rust): base header, MSG / ACK / MULTI_ACK / NACK / CM extensions (PARITY: MSG), payload and
-- the ICRC, which is recomputed over the pseudo-header and checked.
--
-- Install: copy this file to ~/.local/lib/wireshark/plugins/ (or the "Personal Lua
-- Plugins" folder that Help > About > Folders shows), or load it for one run with
--   tshark -X lua_script:tools/wireshark/metaroce.lua -r capture.pcap
-- UDP port 4798 is registered; packets on other ports (soft NICs use ephemeral
-- ports) are found by a heuristic that requires version 1, a known opcode, a
-- length that fits the opcode and a correct ICRC.
-- Needs Lua 5.2 (bit32), as in Wireshark 3.x and 4.0.

local bit = bit32

local p = Proto("metaroce", "MetaRoCE")

local OPCODES = {
  [0x01] = "WRITE", [0x02] = "WRITE_IMM", [0x03] = "SEND", [0x04] = "SEND_IMM",
  [0x05] = "READ_REQ", [0x06] = "READ_RESP", [0x08] = "FETCH_ADD", [0x09] = "COMPARE_SWAP",
  [0x0A] = "ATOMIC_RESP", [0x10] = "ACK", [0x11] = "NACK",
  [0x12] = "PROBE", [0x13] = "MULTI_ACK", [0x14] = "PARITY", [0x20] = "CONNECT", [0x21] = "CONNECT_ACK", [0x22] = "DISCONNECT",
}
-- Extension length per opcode (spec §3.3) and whether the opcode carries a payload.
local EXT = { [0x01] = 32, [0x02] = 32, [0x03] = 32, [0x04] = 32, [0x05] = 32, [0x06] = 32,
              [0x08] = 32, [0x09] = 32, [0x0A] = 32,
              [0x10] = 64, [0x11] = 16, [0x12] = 0, [0x13] = 16, [0x14] = 32, [0x20] = 32, [0x21] = 32, [0x22] = 32 }
local PAYLOAD = { [0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x06] = true,
                  [0x08] = true, [0x09] = true, [0x0A] = true, [0x14] = true }
-- Opcodes whose extension is followed by entries (MULTI_ACK, §3.11): any length.
local ENTRIES = { [0x13] = true }
local REASONS = { [1] = "RNR", [2] = "REMOTE_ACCESS", [3] = "INVALID_REQUEST", [4] = "REMOTE_OPERATIONAL" }

local f = p.fields
f.version   = ProtoField.uint8("metaroce.version", "Version", base.DEC)
f.opcode    = ProtoField.uint8("metaroce.opcode", "Opcode", base.HEX, OPCODES)
f.flags     = ProtoField.uint16("metaroce.flags", "Flags", base.HEX)
f.f_first   = ProtoField.bool("metaroce.flags.first", "FIRST", 16, nil, 0x0001)
f.f_last    = ProtoField.bool("metaroce.flags.last", "LAST", 16, nil, 0x0002)
f.f_ackreq  = ProtoField.bool("metaroce.flags.ack_req", "ACK_REQ", 16, nil, 0x0004)
f.f_retx    = ProtoField.bool("metaroce.flags.retx", "RETX", 16, nil, 0x0008)
f.f_solic   = ProtoField.bool("metaroce.flags.solicited", "SOLICITED", 16, nil, 0x0010)
f.f_ece     = ProtoField.bool("metaroce.flags.ece", "ECE", 16, nil, 0x0020)
f.f_mack    = ProtoField.bool("metaroce.flags.multi_ack_ok", "MULTI_ACK_OK", 16, nil, 0x0040)
f.f_parok   = ProtoField.bool("metaroce.flags.parity_ok", "PARITY_OK", 16, nil, 0x0080)
f.f_resv    = ProtoField.uint16("metaroce.flags.reserved", "Reserved", base.HEX, nil, 0xFF00)
f.dst_qpn   = ProtoField.uint32("metaroce.dst_qpn", "Destination QPN", base.HEX)
f.src_qpn   = ProtoField.uint32("metaroce.src_qpn", "Source QPN", base.HEX)
f.stream    = ProtoField.uint16("metaroce.stream", "Stream", base.DEC)
f.path      = ProtoField.uint16("metaroce.path", "Path", base.DEC)
f.conn_psn  = ProtoField.uint32("metaroce.conn_psn", "Conn PSN", base.HEX)
f.path_psn  = ProtoField.uint32("metaroce.path_psn", "Path PSN", base.DEC)
f.timestamp = ProtoField.uint64("metaroce.timestamp", "Timestamp (ns)", base.DEC)
-- MSG extension (§3.4)
f.msn       = ProtoField.uint32("metaroce.msg.msn", "MSN", base.DEC)
f.recv_idx  = ProtoField.uint32("metaroce.msg.recv_idx", "Receive index", base.DEC)
f.msg_len   = ProtoField.uint32("metaroce.msg.msg_len", "Message length", base.DEC)
f.offset    = ProtoField.uint32("metaroce.msg.offset", "Offset", base.DEC)
f.remote_va = ProtoField.uint64("metaroce.msg.remote_va", "Remote address", base.HEX)
f.rkey      = ProtoField.uint32("metaroce.msg.rkey", "Remote key", base.HEX)
f.imm       = ProtoField.uint32("metaroce.msg.imm", "Immediate", base.HEX)
f.resp_psn  = ProtoField.uint32("metaroce.msg.resp_psn", "Response PSN (resp_psn)", base.HEX)
f.payload   = ProtoField.bytes("metaroce.payload", "Payload")
-- ACK extension (§3.5)
f.conn_cum  = ProtoField.uint32("metaroce.ack.conn_cum", "Conn cumulative PSN", base.HEX)
f.path_cum  = ProtoField.uint32("metaroce.ack.path_cum", "Path cumulative PSN", base.DEC)
f.sack      = ProtoField.bytes("metaroce.ack.sack", "SACK bitmap")
f.sacked    = ProtoField.string("metaroce.ack.sacked", "SACKed path PSNs")
f.echo_ts   = ProtoField.uint64("metaroce.ack.echo_ts", "Echoed timestamp (ns)", base.DEC)
f.ce_count  = ProtoField.uint32("metaroce.ack.ce_count", "CE count", base.DEC)
f.rate_hint = ProtoField.uint32("metaroce.ack.rate_hint", "Rate hint (Mbit/s)", base.DEC)
f.credit    = ProtoField.uint32("metaroce.ack.credit", "Credit", base.DEC)
f.rx_count  = ProtoField.uint32("metaroce.ack.rx_count", "Received count", base.DEC)
-- MULTI_ACK extension and entries (§3.11)
f.m_count   = ProtoField.uint8("metaroce.multi_ack.count", "Entries", base.DEC)
f.m_resv    = ProtoField.bytes("metaroce.multi_ack.reserved", "Reserved")
f.e_path    = ProtoField.uint8("metaroce.multi_ack.path", "Path", base.DEC)
f.e_flags   = ProtoField.uint8("metaroce.multi_ack.flags", "Entry flags (bit 0: ECE)", base.HEX)
f.e_sacklen = ProtoField.uint8("metaroce.multi_ack.sack_len", "SACK bytes", base.DEC)
-- NACK extension (§3.6)
f.reason    = ProtoField.uint8("metaroce.nack.reason", "Reason", base.DEC, REASONS)
f.n_resv    = ProtoField.bytes("metaroce.nack.reserved", "Reserved")
f.n_psn     = ProtoField.uint32("metaroce.nack.conn_psn", "Rejected conn PSN", base.HEX)
f.n_msn     = ProtoField.uint32("metaroce.nack.msn", "Rejected MSN", base.DEC)
f.detail    = ProtoField.uint32("metaroce.nack.detail", "Detail (RNR delay, us)", base.DEC)
-- CM extension (§3.8)
f.init_psn  = ProtoField.uint32("metaroce.cm.init_conn_psn", "Initial conn PSN", base.HEX)
f.paths     = ProtoField.uint16("metaroce.cm.paths", "Paths", base.DEC)
f.streams   = ProtoField.uint16("metaroce.cm.streams", "Streams", base.DEC)
f.mtu       = ProtoField.uint32("metaroce.cm.mtu", "MTU", base.DEC)
f.cm_credit = ProtoField.uint32("metaroce.cm.credit", "Credit", base.DEC)
f.line_rate = ProtoField.uint32("metaroce.cm.line_rate", "Line rate (Mbit/s)", base.DEC)
f.cm_resv   = ProtoField.bytes("metaroce.cm.reserved", "Reserved")
-- ICRC (§4)
f.icrc      = ProtoField.uint32("metaroce.icrc", "ICRC", base.HEX)
f.icrc_ok   = ProtoField.bool("metaroce.icrc.good", "ICRC good")
f.icrc_calc = ProtoField.uint32("metaroce.icrc.computed", "Computed ICRC", base.HEX)

local e_icrc = ProtoExpert.new("metaroce.icrc.bad", "Bad ICRC", expert.group.CHECKSUM, expert.severity.ERROR)
local e_len = ProtoExpert.new("metaroce.bad_length", "Length does not fit the opcode",
                              expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_icrc, e_len }

local ip_src = Field.new("ip.src")
local ip_dst = Field.new("ip.dst")
local ip6_src = Field.new("ipv6.src")
local ip6_dst = Field.new("ipv6.dst")

-- CRC-32 (IEEE 802.3, reflected, as zlib's crc32), table driven.
local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit.band(c, 1) == 1 then c = bit.bxor(0xEDB88320, bit.rshift(c, 1)) else c = bit.rshift(c, 1) end
  end
  CRC_TABLE[i] = c
end

local function crc_update(crc, bytes, from, to)
  for i = from, to - 1 do
    crc = bit.bxor(CRC_TABLE[bit.band(bit.bxor(crc, bytes:get_index(i)), 0xFF)], bit.rshift(crc, 8))
  end
  return crc
end

-- The 16-byte address of the pseudo-header: IPv4 as ::ffff:a.b.c.d.
local function addr16(v4, v6)
  local fi = v6()
  if fi then return fi.range:bytes() end
  fi = v4()
  if not fi then return nil end
  local b = ByteArray.new("00000000000000000000ffff")
  b:append(fi.range:bytes())
  return b
end

-- ICRC over the pseudo-header (§4) and udp_payload[0 .. L-4].
local function icrc_of(tvb, pinfo)
  local src = addr16(ip_src, ip6_src)
  local dst = addr16(ip_dst, ip6_dst)
  if not src or not dst or src:len() ~= 16 or dst:len() ~= 16 then return nil end
  local L = tvb:len()
  local udp_len = L + 8
  if udp_len > 65535 then udp_len = 65535 end
  local ph = ByteArray.new()
  ph:append(src)
  ph:append(dst)
  ph:set_size(40)
  local function put16(off, v)
    ph:set_index(off, bit.rshift(v, 8))
    ph:set_index(off + 1, bit.band(v, 0xFF))
  end
  put16(32, pinfo.src_port)
  put16(34, pinfo.dst_port)
  put16(36, udp_len)
  put16(38, 0)
  local crc = 0xFFFFFFFF
  crc = crc_update(crc, ph, 0, 40)
  crc = crc_update(crc, tvb:range(0, L - 4):bytes(), 0, L - 4)
  return bit.bxor(crc, 0xFFFFFFFF)
end

-- Framing checks of §6.2 steps 1-5: returns true when the length fits the opcode.
local function framing_ok(tvb)
  local L = tvb:len()
  if L < 36 then return false end
  local op = tvb(1, 1):uint()
  local ext = EXT[op]
  if tvb(0, 1):uint() ~= 1 or ext == nil then return false end
  if L < 36 + ext then return false end
  if not PAYLOAD[op] and not ENTRIES[op] and L ~= 36 + ext then return false end
  return true
end

local function sacked_list(tvb, off, cum, nbytes)
  local out = {}
  for i = 0, (nbytes or 32) * 8 - 1 do
    local byte = tvb(off + math.floor(i / 8), 1):uint()
    if bit.band(byte, bit.lshift(1, i % 8)) ~= 0 then
      out[#out + 1] = tostring((cum + 1 + i) % 4294967296)
    end
  end
  if #out == 0 then return "none" end
  return table.concat(out, " ")
end

function p.dissector(tvb, pinfo, tree)
  local L = tvb:len()
  if L < 2 then return 0 end
  pinfo.cols.protocol = "MetaRoCE"
  local t = tree:add(p, tvb(), "MetaRoCE")
  if L < 36 then
    t:add_proto_expert_info(e_len, "Truncated: " .. L .. " bytes, a packet has at least 36")
    pinfo.cols.info = "MetaRoCE truncated"
    return L
  end
  local op = tvb(1, 1):uint()
  local name = OPCODES[op] or string.format("unknown opcode 0x%02x", op)
  t:add(f.version, tvb(0, 1))
  t:add(f.opcode, tvb(1, 1))
  local ft = t:add(f.flags, tvb(2, 2))
  for _, fl in ipairs({ f.f_first, f.f_last, f.f_ackreq, f.f_retx, f.f_solic, f.f_ece, f.f_mack, f.f_parok, f.f_resv }) do
    ft:add(fl, tvb(2, 2))
  end
  t:add(f.dst_qpn, tvb(4, 4))
  t:add(f.src_qpn, tvb(8, 4))
  t:add(f.stream, tvb(12, 2))
  t:add(f.path, tvb(14, 2))
  t:add(f.conn_psn, tvb(16, 4))
  t:add(f.path_psn, tvb(20, 4))
  t:add(f.timestamp, tvb(24, 8))
  local info = string.format("%s qpn 0x%x path %d", name, tvb(4, 4):uint(), tvb(14, 2):uint())
  if not framing_ok(tvb) then
    t:add_proto_expert_info(e_len, "Version, opcode or length invalid (spec §6.2 steps 1-5)")
    pinfo.cols.info = "MetaRoCE " .. info .. " [invalid framing]"
    return L
  end
  local ext = EXT[op]
  -- PARITY (§3.12) has the MSG extension too; its receive index is the group's packet count.
  if ext == 32 and (op < 0x10 or op == 0x14) then
    local m = t:add(p, tvb(32, 32), "MSG extension")
    m:add(f.msn, tvb(32, 4))
    m:add(f.recv_idx, tvb(36, 4))
    m:add(f.msg_len, tvb(40, 4))
    m:add(f.offset, tvb(44, 4))
    m:add(f.remote_va, tvb(48, 8))
    m:add(f.rkey, tvb(56, 4))
    -- Requests (READ_REQ, atomics) carry resp_psn where others carry the immediate (§3.4).
    m:add((op == 0x05 or op == 0x08 or op == 0x09) and f.resp_psn or f.imm, tvb(60, 4))
    info = info .. string.format(" conn_psn 0x%x path_psn %d msn %d off %d", tvb(16, 4):uint(),
                                 tvb(20, 4):uint(), tvb(32, 4):uint(), tvb(44, 4):uint())
    if L - 68 > 0 then t:add(f.payload, tvb(64, L - 68)) end
  elseif op == 0x10 then
    local a = t:add(p, tvb(32, 64), "ACK extension")
    local cum = tvb(36, 4):uint()
    a:add(f.conn_cum, tvb(32, 4))
    a:add(f.path_cum, tvb(36, 4))
    a:add(f.sack, tvb(40, 32))
    a:add(f.sacked, tvb(40, 32), sacked_list(tvb, 40, cum))
    a:add(f.echo_ts, tvb(72, 8))
    a:add(f.ce_count, tvb(80, 4))
    a:add(f.rate_hint, tvb(84, 4))
    a:add(f.credit, tvb(88, 4))
    a:add(f.rx_count, tvb(92, 4))
    info = info .. string.format(" conn_cum 0x%x path_cum %d", tvb(32, 4):uint(), cum)
  elseif op == 0x13 then
    local m = t:add(p, tvb(32, 16), "MULTI_ACK extension")
    m:add(f.conn_cum, tvb(32, 4))
    m:add(f.credit, tvb(36, 4))
    m:add(f.rate_hint, tvb(40, 4))
    m:add(f.m_count, tvb(44, 1))
    m:add(f.m_resv, tvb(45, 3))
    local count = tvb(44, 1):uint()
    local at, paths, seen = 48, {}, {}
    for _ = 1, count do
      if at + 24 > L - 4 then break end
      local n = tvb(at + 2, 1):uint()
      local path = tvb(at, 1):uint()
      if n > 32 or at + 24 + n > L - 4 or path > 63 or seen[path] then break end
      seen[path] = true
      local e = t:add(p, tvb(at, 24 + n), string.format("Entry: path %d", tvb(at, 1):uint()))
      local cum = tvb(at + 4, 4):uint()
      e:add(f.e_path, tvb(at, 1))
      e:add(f.e_flags, tvb(at + 1, 1))
      e:add(f.e_sacklen, tvb(at + 2, 1))
      e:add(f.path_cum, tvb(at + 4, 4))
      e:add(f.echo_ts, tvb(at + 8, 8))
      e:add(f.ce_count, tvb(at + 16, 4))
      e:add(f.rx_count, tvb(at + 20, 4))
      if n > 0 then
        e:add(f.sack, tvb(at + 24, n))
        e:add(f.sacked, tvb(at + 24, n), sacked_list(tvb, at + 24, cum, n))
      end
      paths[#paths + 1] = tostring(tvb(at, 1):uint())
      at = at + 24 + n
      count = count - 1
    end
    if tvb(44, 1):uint() == 0 or count ~= 0 or at ~= L - 4 then
      t:add_proto_expert_info(e_len, "Malformed MULTI_ACK entries (spec §3.11: dropped, bad_format)")
    end
    info = info .. string.format(" conn_cum 0x%x paths %s", tvb(32, 4):uint(), table.concat(paths, ","))
  elseif op == 0x11 then
    local n = t:add(p, tvb(32, 16), "NACK extension")
    n:add(f.reason, tvb(32, 1))
    n:add(f.n_resv, tvb(33, 3))
    n:add(f.n_psn, tvb(36, 4))
    n:add(f.n_msn, tvb(40, 4))
    n:add(f.detail, tvb(44, 4))
    local r = tvb(32, 1):uint()
    info = info .. string.format(" %s conn_psn 0x%x", REASONS[r] or ("reason " .. r), tvb(36, 4):uint())
    if REASONS[r] == nil then
      n:add_proto_expert_info(e_len, "Unknown NACK reason (spec §3.6: dropped, bad_format)")
    end
  elseif op == 0x12 then
    -- A PROBE's conn_psn is the sender's next conn PSN, its evidence (§3.7, v0.1.3).
    info = info .. string.format(" path_psn %d conn_psn 0x%x", tvb(20, 4):uint(), tvb(16, 4):uint())
  else
    local c = t:add(p, tvb(32, 32), "CM extension")
    c:add(f.init_psn, tvb(32, 4))
    c:add(f.paths, tvb(36, 2))
    c:add(f.streams, tvb(38, 2))
    c:add(f.mtu, tvb(40, 4))
    c:add(f.cm_credit, tvb(44, 4))
    c:add(f.line_rate, tvb(48, 4))
    c:add(f.cm_resv, tvb(52, 12))
  end
  local carried = tvb(L - 4, 4):uint()
  local ti = t:add(f.icrc, tvb(L - 4, 4))
  local computed = icrc_of(tvb, pinfo)
  if computed == nil then
    ti:append_text(" [not checked: no IP header]")
  elseif computed == carried then
    ti:append_text(" [correct]")
    t:add(f.icrc_ok, tvb(L - 4, 4), true):set_generated()
  else
    ti:append_text(string.format(" [incorrect, should be 0x%08x]", computed))
    t:add(f.icrc_ok, tvb(L - 4, 4), false):set_generated()
    t:add(f.icrc_calc, tvb(L - 4, 4), computed):set_generated()
    ti:add_proto_expert_info(e_icrc)
    info = info .. " [bad ICRC]"
  end
  pinfo.cols.info = info
  return L
end

-- Heuristic for MetaRoCE on any UDP port: framing plus a correct ICRC.
local function heuristic(tvb, pinfo, tree)
  if not framing_ok(tvb) then return false end
  if icrc_of(tvb, pinfo) ~= tvb(tvb:len() - 4, 4):uint() then return false end
  p.dissector(tvb, pinfo, tree)
  return true
end

DissectorTable.get("udp.port"):add(4798, p)
p:register_heuristic("udp", heuristic)
