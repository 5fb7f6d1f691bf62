// Hand-written C ABI shim around one Verilated model.
//
// build.rs generates one small .cpp per model that defines VSHIM_MODEL (the
// Verilator --prefix class), VSHIM_FN(name) (the C symbol prefix) and the
// port switch body VSHIM_PORT_CASES, then includes this file. The caller
// reads and writes ports in place: `port` gives the address and size of a
// port's member of the model (CData, SData, IData, QData or the 32-bit words
// of a VlWide), so a cycle costs no call per port.
//
// With VSHIM_ROOT (the model's root class) and VSHIM_ROOT_FN(name) (its
// step functions) defined, which build.rs does when the generated code has
// Verilator 5's scheduling steps, `tick` can run a rising edge without
// re-evaluating the input-driven logic (see `edge_settled`).
#include <cstdint>
#include <cstddef>

#include "verilated.h"
#include "verilated_vcd_c.h"

#ifdef VSHIM_ROOT
// The steps of Verilator 5's `eval` after its input-combinational region:
// clock-edge triggers, the active region, the NBA region (sequential
// logic and the combinational logic after it).
void VSHIM_ROOT_FN(eval_triggers__act)(VSHIM_ROOT*);
void VSHIM_ROOT_FN(eval_act)(VSHIM_ROOT*);
void VSHIM_ROOT_FN(eval_nba)(VSHIM_ROOT*);
#endif

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

#ifdef VSHIM_ROOT
// The rising edge when the inputs have not changed since the last `eval`
// (with `clock` low): `eval` without its first step, which would only
// recompute the input-driven logic from the same inputs and state. The rest
// is `eval`'s active/NBA loop as Verilator generates it: NBA until no edge
// is pending (one pass for a single clock).
static void edge_settled(Sim* s) {
    auto* r = s->top->rootp;
    s->top->clock = 1;
    for (int nba = 0;; ++nba) {
        r->__VnbaTriggered.clear();
        for (int act = 0;; ++act) {
            VSHIM_ROOT_FN(eval_triggers__act)(r);
            if (!r->__VactTriggered.any()) break;
            if (act > 100) VL_FATAL_MT(__FILE__, __LINE__, "", "Active region did not converge.");
            r->__VnbaTriggered.set(r->__VactTriggered);
            VSHIM_ROOT_FN(eval_act)(r);
        }
        if (!r->__VnbaTriggered.any()) break;
        if (nba > 100) VL_FATAL_MT(__FILE__, __LINE__, "", "NBA region did not converge.");
        VSHIM_ROOT_FN(eval_nba)(r);
    }
}
#endif

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
// and every evaluation costs a pass over the input-driven logic. `settled`:
// the caller has not changed an input since that evaluation, so the rising
// edge skips the pass too (`edge_settled`).
void VSHIM_FN(tick)(void* h, int settled) {
    auto* s = static_cast<vshim::Sim*>(h);
    if (!s->low_seen || s->vcd) {
        s->top->clock = 0;
        s->top->eval();
        if (s->vcd) s->vcd->dump(s->time);
    }
    s->time += 1;
#ifdef VSHIM_ROOT
    if (settled && s->low_seen && !s->vcd) {
        vshim::edge_settled(s);
    } else
#endif
    {
        s->top->clock = 1;
        s->top->eval();
        if (s->vcd) s->vcd->dump(s->time);
    }
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
