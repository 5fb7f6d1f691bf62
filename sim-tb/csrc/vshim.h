// Hand-written C ABI shim around one Verilated model.
//
// build.rs generates one small .cpp per model that defines VSHIM_MODEL (the
// Verilator --prefix class), VSHIM_FN(name) (the C symbol prefix) and the
// port switch bodies VSHIM_SET_CASES / VSHIM_GET_CASES, then includes this
// file. Ports are passed as little-endian arrays of 32-bit words, the layout
// Verilator uses for ports wider than 64 bits (VlWide).
#include <cstdint>
#include <cstddef>

#include "verilated.h"
#include "verilated_vcd_c.h"

namespace vshim {

inline void put(CData& p, const uint32_t* w) { p = static_cast<CData>(w[0]); }
inline void put(SData& p, const uint32_t* w) { p = static_cast<SData>(w[0]); }
inline void put(IData& p, const uint32_t* w) { p = w[0]; }
inline void put(QData& p, const uint32_t* w) {
    p = static_cast<QData>(w[0]) | (static_cast<QData>(w[1]) << 32);
}
template <std::size_t N> inline void put(VlWide<N>& p, const uint32_t* w) {
    for (std::size_t i = 0; i < N; ++i) p[i] = w[i];
}

inline void take(const CData& p, uint32_t* w) { w[0] = p; }
inline void take(const SData& p, uint32_t* w) { w[0] = p; }
inline void take(const IData& p, uint32_t* w) { w[0] = p; }
inline void take(const QData& p, uint32_t* w) {
    w[0] = static_cast<uint32_t>(p);
    w[1] = static_cast<uint32_t>(p >> 32);
}
template <std::size_t N> inline void take(const VlWide<N>& p, uint32_t* w) {
    for (std::size_t i = 0; i < N; ++i) w[i] = p[i];
}

struct Sim {
    VerilatedContext ctx;
    VSHIM_MODEL* top = nullptr;
    VerilatedVcdC* vcd = nullptr;
    uint64_t time = 0;
};

}  // namespace vshim

extern "C" {

void* VSHIM_FN(new)() {
    auto* s = new vshim::Sim;
    s->ctx.traceEverOn(true);
    s->top = new VSHIM_MODEL(&s->ctx, "top");
    return s;
}

void VSHIM_FN(free)(void* h) {
    auto* s = static_cast<vshim::Sim*>(h);
    if (s->vcd) {
        s->vcd->close();
        delete s->vcd;
    }
    s->top->final();
    delete s->top;
    delete s;
}

void VSHIM_FN(eval)(void* h) { static_cast<vshim::Sim*>(h)->top->eval(); }

// One clock cycle: falling edge, eval, rising edge, eval (VCD sample at each).
void VSHIM_FN(tick)(void* h) {
    auto* s = static_cast<vshim::Sim*>(h);
    s->top->clock = 0;
    s->top->eval();
    if (s->vcd) s->vcd->dump(s->time);
    s->time += 1;
    s->top->clock = 1;
    s->top->eval();
    if (s->vcd) s->vcd->dump(s->time);
    s->time += 1;
}

void VSHIM_FN(set)(void* h, uint32_t port, const uint32_t* words) {
    auto* top = static_cast<vshim::Sim*>(h)->top;
    switch (port) { VSHIM_SET_CASES default: break; }
}

void VSHIM_FN(get)(void* h, uint32_t port, uint32_t* words) {
    auto* top = static_cast<vshim::Sim*>(h)->top;
    switch (port) { VSHIM_GET_CASES default: break; }
}

// Returns 0 on success, -1 if the file could not be opened.
int VSHIM_FN(trace_open)(void* h, const char* path) {
    auto* s = static_cast<vshim::Sim*>(h);
    if (s->vcd) return 0;
    s->vcd = new VerilatedVcdC;
    s->top->trace(s->vcd, 99);
    s->vcd->open(path);
    if (!s->vcd->isOpen()) {
        delete s->vcd;
        s->vcd = nullptr;
        return -1;
    }
    return 0;
}

}  // extern "C"
