# Alveo U250 (xcu250-figd2104-2L-e): the pins alveo_top uses. Locations from
# the board's public pinout (Xilinx UG1289 / the Alveo U250 XDC; the same
# locations appear in Corundum's fpga/mqnic/AU250). NOT BUILT HERE.

# Configuration (the card's SPI flash)
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]

# PCIe: reference clock (MGTREFCLK0 of GTY quad 226) and PERST#. The lanes
# are placed by the XDMA IP (its default PCIe block for this part; check).
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP true} [get_ports pcie_reset_n]
set_false_path -from [get_ports pcie_reset_n]

# QSFP0: GTY quad 231 (X1Y44..X1Y47); reference clock MGTREFCLK1 of quad 231.
set_property PACKAGE_PIN N4 [get_ports {qsfp0_rx_p[0]}]
set_property PACKAGE_PIN N9 [get_ports {qsfp0_tx_p[0]}]
set_property PACKAGE_PIN M2 [get_ports {qsfp0_rx_p[1]}]
set_property PACKAGE_PIN M7 [get_ports {qsfp0_tx_p[1]}]
set_property PACKAGE_PIN L4 [get_ports {qsfp0_rx_p[2]}]
set_property PACKAGE_PIN L9 [get_ports {qsfp0_tx_p[2]}]
set_property PACKAGE_PIN K2 [get_ports {qsfp0_rx_p[3]}]
set_property PACKAGE_PIN K7 [get_ports {qsfp0_tx_p[3]}]
set_property PACKAGE_PIN K11 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN K10 [get_ports qsfp0_refclk_n]
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p]

# QSFP0 module and clock-generator control (LVCMOS12, static)
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12} [get_ports qsfp0_modsell]
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12} [get_ports qsfp0_resetl]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12} [get_ports qsfp0_lpmode]
set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVCMOS12} [get_ports qsfp0_refclk_reset]
set_property -dict {PACKAGE_PIN AT20 IOSTANDARD LVCMOS12} [get_ports {qsfp0_fs[0]}]
set_property -dict {PACKAGE_PIN AU22 IOSTANDARD LVCMOS12} [get_ports {qsfp0_fs[1]}]
set_false_path -to [get_ports {qsfp0_modsell qsfp0_resetl qsfp0_lpmode qsfp0_refclk_reset qsfp0_fs[*]}]

# The core clock (XDMA axi_aclk, 250 MHz) and the CMAC's 322 MHz clocks
# meet only in the xpm_fifo_axis instances, whose own constraints cover the
# crossing; the static QSFP outputs and `now` need nothing more.
