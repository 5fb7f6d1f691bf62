// Hand-written C ABI shim around one Verilated model.
//
// build.rs generates one small .cpp per model that defines VSHIM_MODEL (the
// Verilator --prefix class), VSHIM_FN(name) (the C symbol prefix) and the
// port switch body VSHIM_PORT_CASES, then includes this file. The caller
// reads and writes ports in place: `port` gives the address and size of a
// port's member of the model (CData, SData, IData, QData or the 32-bit words
// of a VlWide), so a cycle costs no call per port.
#include <cstdint>
#include <cstddef>

#include "verilated.h"
#include "verilated_vcd_c.h"

namespace vshim {

struct Sim {
    VerilatedContext ctx;
    VSHIM_MODEL* top = nullptr;
    VerilatedVcdC* vcd = nullptr;
    uint64_t time = 0;
    // The model has been evaluated with `clock` low since the last rising
    // edge, so the next edge is seen without another evaluation.
    bool low_seen = false;
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

void VSHIM_FN(eval)(void* h) {
    auto* s = static_cast<vshim::Sim*>(h);
    s->top->eval();
    s->low_seen = true;
}

// One clock cycle: falling edge, eval, rising edge, eval (VCD sample at
// each), then `clock` back low for the next cycle's inputs. The falling
// edge's evaluation is skipped when the caller has already evaluated the
// inputs (with `clock` low) and nothing is traced: no logic uses that edge,
// and every evaluation costs a pass over the input-driven logic.
void VSHIM_FN(tick)(void* h) {
    auto* s = static_cast<vshim::Sim*>(h);
    if (!s->low_seen || s->vcd) {
        s->top->clock = 0;
        s->top->eval();
        if (s->vcd) s->vcd->dump(s->time);
    }
    s->time += 1;
    s->top->clock = 1;
    s->top->eval();
    if (s->vcd) s->vcd->dump(s->time);
    s->time += 1;
    s->top->clock = 0;
    s->low_seen = false;
}

// Address of port `port`'s member in the model, its size in `*bytes`; null
// (size 0) for an unknown port. Valid until `free`.
void* VSHIM_FN(port)(void* h, uint32_t port, uint32_t* bytes) {
    auto* top = static_cast<vshim::Sim*>(h)->top;
    switch (port) { VSHIM_PORT_CASES default: break; }
    *bytes = 0;
    return nullptr;
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
