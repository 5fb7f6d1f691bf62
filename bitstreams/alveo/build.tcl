# MetaRoCE 512-bit core on an Alveo U250: Vivado project, synthesis,
# implementation, bitstream. NOT BUILT HERE (no Vivado on the project's
# machines); see README.md for what to check first.
#
#   ./gen.sh                                 # emits gen/*.v from the hdl crate
#   vivado -mode batch -source build.tcl     # creates ./project, writes the .bit
#
# Sources: Xilinx PG195 (XDMA, AXI Bridge mode), PG203 (CMAC UltraScale+),
# the public Alveo U250 pinout (as in Corundum's fpga/mqnic/AU250 XDC).

set here [file normalize [file dirname [info script]]]
set part xcu250-figd2104-2L-e
set gen  [expr {[info exists ::env(GEN)] ? $::env(GEN) : "$here/gen"}]

create_project -force metaroce_u250 $here/project -part $part
set_property target_language Verilog [current_project]

# ---- our sources: the emitted device and shims, the top, the pins ----
add_files [list \
    $gen/metaroce_device.v \
    $gen/metaroce_axil_bar.v \
    $gen/metaroce_dma_read.v \
    $gen/metaroce_dma_write.v \
    $here/alveo_top.v]
add_files -fileset constrs_1 $here/alveo_u250.xdc
set_property top alveo_top [current_fileset]

# ---- XDMA in AXI Bridge mode: Gen3 x16, 512-bit AXI at 250 MHz ----
# BAR0 (64 KiB) reaches M_AXI_B; S_AXI_B reaches host memory (64-bit
# addresses). MSI interrupts from the fabric (intx_msi_*).
create_ip -name xdma -vendor xilinx.com -library ip -module_name xdma_0
set_property -dict [list \
    CONFIG.functional_mode {AXI_Bridge} \
    CONFIG.mode_selection {Advanced} \
    CONFIG.device_port_type {PCI_Express_Endpoint_device} \
    CONFIG.pl_link_cap_max_link_width {X16} \
    CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
    CONFIG.ref_clk_freq {100_MHz} \
    CONFIG.axi_data_width {512_bit} \
    CONFIG.axisten_freq {250} \
    CONFIG.axi_addr_width {64} \
    CONFIG.en_axi_slave_if {true} \
    CONFIG.en_axi_master_if {true} \
    CONFIG.pf0_bar0_enabled {true} \
    CONFIG.pf0_bar0_64bit {false} \
    CONFIG.pf0_bar0_scale {Kilobytes} \
    CONFIG.pf0_bar0_size {64} \
    CONFIG.pciebar2axibar_0 {0x0000000000000000} \
    CONFIG.axibar_num {1} \
    CONFIG.axibar2pciebar_0 {0x0000000000000000} \
    CONFIG.pf0_msi_enabled {true} \
    CONFIG.pf0_msix_enabled {false} \
    CONFIG.pf0_class_code_base {02} \
    CONFIG.pf0_class_code_sub {00} \
] [get_ips xdma_0]

# M_AXI_B (512-bit AXI4) -> 32-bit AXI4 -> AXI4-Lite for AxilBar.
create_ip -name axi_dwidth_converter -vendor xilinx.com -library ip -module_name bar_dwidth
set_property -dict [list \
    CONFIG.SI_DATA_WIDTH {512} CONFIG.MI_DATA_WIDTH {32} \
    CONFIG.ADDR_WIDTH {64} CONFIG.SI_ID_WIDTH {4} CONFIG.PROTOCOL {AXI4} \
] [get_ips bar_dwidth]
create_ip -name axi_protocol_converter -vendor xilinx.com -library ip -module_name bar_lite
set_property -dict [list \
    CONFIG.SI_PROTOCOL {AXI4} CONFIG.MI_PROTOCOL {AXI4LITE} \
    CONFIG.DATA_WIDTH {32} CONFIG.ADDR_WIDTH {64} CONFIG.TRANSLATION_MODE {2} \
] [get_ips bar_lite]

# ---- CMAC UltraScale+: 100GBASE-R4 (CAUI-4) on QSFP0, RS-FEC, AXIS ----
# QSFP0 is GTY quad 231 (X1Y44..X1Y47); its 161.1328125 MHz reference
# comes from the board's clock generator (FS = 0b10).
create_ip -name cmac_usplus -vendor xilinx.com -library ip -module_name cmac_0
set_property -dict [list \
    CONFIG.CMAC_CAUI4_MODE {1} \
    CONFIG.NUM_LANES {4x25} \
    CONFIG.GT_REF_CLK_FREQ {161.1328125} \
    CONFIG.USER_INTERFACE {AXIS} \
    CONFIG.GT_DRP_CLK {100} \
    CONFIG.INCLUDE_RS_FEC {1} \
    CONFIG.TX_FLOW_CONTROL {0} \
    CONFIG.RX_FLOW_CONTROL {0} \
    CONFIG.CMAC_CORE_SELECT {CMACE4_X0Y8} \
    CONFIG.GT_GROUP_SELECT {X1Y44~X1Y47} \
    CONFIG.LANE1_GT_LOC {X1Y44} \
    CONFIG.LANE2_GT_LOC {X1Y45} \
    CONFIG.LANE3_GT_LOC {X1Y46} \
    CONFIG.LANE4_GT_LOC {X1Y47} \
] [get_ips cmac_0]

generate_target all [get_ips]
synth_ip [get_ips]

# ---- synthesis, implementation, bitstream ----
launch_runs synth_1 -jobs 8
wait_on_run synth_1
launch_runs impl_1 -to_step write_bitstream -jobs 8
wait_on_run impl_1
open_run impl_1
report_timing_summary -file $here/project/timing_summary.rpt
report_utilization -file $here/project/utilization.rpt
puts "bitstream: [get_property DIRECTORY [get_runs impl_1]]/alveo_top.bit"
