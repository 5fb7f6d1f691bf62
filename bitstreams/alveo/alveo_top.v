// MetaRoCE on an Alveo U250: the 512-bit device (metaroce_device, emitted
// from the hdl crate) under Xilinx XDMA in AXI Bridge mode (PCIe Gen3 x16)
// and the CMAC UltraScale+ 100G MAC on QSFP0. NOT BUILT HERE: written from
// the vendors' product guides (PG195, PG203) without Vivado; the port names
// of the two IPs must be checked against the generated instantiation
// templates first (README.md).
//
// Clocks: the device, the shims and the XDMA's AXI side run on axi_aclk
// (250 MHz); the CMAC's TX side on gt_txusrclk2 and its RX side on
// gt_rxusrclk2 (322.27 MHz). An xpm_fifo_axis per direction crosses
// between them.
`default_nettype none
module alveo_top (
    // PCIe edge connector
    input  wire [15:0] pcie_rx_p, pcie_rx_n,
    output wire [15:0] pcie_tx_p, pcie_tx_n,
    input  wire        pcie_refclk_p, pcie_refclk_n,  // 100 MHz
    input  wire        pcie_reset_n,                  // PERST#
    // QSFP0
    input  wire [3:0]  qsfp0_rx_p, qsfp0_rx_n,
    output wire [3:0]  qsfp0_tx_p, qsfp0_tx_n,
    input  wire        qsfp0_refclk_p, qsfp0_refclk_n, // 161.1328125 MHz
    output wire        qsfp0_modsell, qsfp0_resetl, qsfp0_lpmode,
    output wire        qsfp0_refclk_reset,
    output wire [1:0]  qsfp0_fs
);
    // The module is selected, out of reset, in high-power mode; its
    // reference clock generator runs at 161.1328125 MHz (FS = 0b10).
    assign qsfp0_modsell = 1'b0;
    assign qsfp0_resetl = 1'b1;
    assign qsfp0_lpmode = 1'b0;
    assign qsfp0_refclk_reset = 1'b0;
    assign qsfp0_fs = 2'b10;

    // ---- PCIe reference clock: the GT's clock and its half for the IP ----
    wire sys_clk_gt, sys_clk;
    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) refclk_buf (
        .I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0),
        .O(sys_clk_gt), .ODIV2(sys_clk));
    // The CMAC's init/DRP clock: the PCIe reference's half (100 MHz).
    wire init_clk;
    BUFG_GT init_bufg (.I(sys_clk), .CE(1'b1), .CEMASK(1'b0), .CLR(1'b0),
        .CLRMASK(1'b0), .DIV(3'b000), .O(init_clk));

    wire clk, rstn;           // axi_aclk, axi_aresetn of the XDMA
    wire rst = !rstn;

    // ---- BAR0: M_AXI_B -> 32-bit AXI4 -> AXI4-Lite -> AxilBar ----
    // BAR0 as the XDMA's M_AXI_B gives it (bar_*), host memory on its
    // S_AXI_B (dma_*), BAR0 as AXI4-Lite (lite_*).
    wire [3:0] bar_awid, bar_arid, bar_bid, bar_rid, bar_awcache, bar_arcache;
    wire [63:0] bar_awaddr, bar_araddr;
    wire [7:0] bar_awlen, bar_arlen;
    wire [2:0] bar_awsize, bar_arsize, bar_awprot, bar_arprot;
    wire [1:0] bar_awburst, bar_arburst, bar_bresp, bar_rresp;
    wire bar_awlock, bar_arlock, bar_awvalid, bar_awready, bar_arvalid, bar_arready;
    wire [511:0] bar_wdata, bar_rdata;
    wire [63:0] bar_wstrb;
    wire bar_wlast, bar_wvalid, bar_wready, bar_bvalid, bar_bready, bar_rlast, bar_rvalid, bar_rready;
    wire [3:0] dma_awid, dma_arid, dma_bid, dma_rid, dma_awcache, dma_arcache;
    wire [63:0] dma_awaddr, dma_araddr;
    wire [7:0] dma_awlen, dma_arlen;
    wire [2:0] dma_awsize, dma_arsize, dma_awprot, dma_arprot;
    wire [1:0] dma_awburst, dma_arburst, dma_bresp, dma_rresp;
    wire dma_awlock, dma_arlock, dma_awvalid, dma_awready, dma_arvalid, dma_arready;
    wire [511:0] dma_wdata, dma_rdata;
    wire [63:0] dma_wstrb;
    wire dma_wlast, dma_wvalid, dma_wready, dma_bvalid, dma_bready, dma_rlast, dma_rvalid, dma_rready;
    wire [63:0] lite_awaddr, lite_araddr;
    wire [31:0] lite_wdata, lite_rdata;
    wire [1:0] lite_bresp, lite_rresp;
    wire lite_awvalid, lite_awready, lite_wvalid, lite_wready, lite_bvalid, lite_bready;
    wire lite_arvalid, lite_arready, lite_rvalid, lite_rready;

    // ---- interrupts: the device's vector as an MSI vector number ----
    wire irq_valid, irq_ready, msi_grant;
    wire [1:0] irq_vector;

    xdma_0 pcie (
        .sys_clk(sys_clk), .sys_clk_gt(sys_clk_gt), .sys_rst_n(pcie_reset_n),
        .pci_exp_rxp(pcie_rx_p), .pci_exp_rxn(pcie_rx_n),
        .pci_exp_txp(pcie_tx_p), .pci_exp_txn(pcie_tx_n),
        .axi_aclk(clk), .axi_aresetn(rstn), .user_lnk_up(),
        // BAR0 (master)
        .m_axib_awid(bar_awid), .m_axib_awaddr(bar_awaddr), .m_axib_awlen(bar_awlen),
        .m_axib_awsize(bar_awsize), .m_axib_awburst(bar_awburst), .m_axib_awprot(bar_awprot),
        .m_axib_awlock(bar_awlock), .m_axib_awcache(bar_awcache),
        .m_axib_awvalid(bar_awvalid), .m_axib_awready(bar_awready),
        .m_axib_wdata(bar_wdata), .m_axib_wstrb(bar_wstrb), .m_axib_wlast(bar_wlast),
        .m_axib_wvalid(bar_wvalid), .m_axib_wready(bar_wready),
        .m_axib_bid(bar_bid), .m_axib_bresp(bar_bresp), .m_axib_bvalid(bar_bvalid),
        .m_axib_bready(bar_bready),
        .m_axib_arid(bar_arid), .m_axib_araddr(bar_araddr), .m_axib_arlen(bar_arlen),
        .m_axib_arsize(bar_arsize), .m_axib_arburst(bar_arburst), .m_axib_arprot(bar_arprot),
        .m_axib_arlock(bar_arlock), .m_axib_arcache(bar_arcache),
        .m_axib_arvalid(bar_arvalid), .m_axib_arready(bar_arready),
        .m_axib_rid(bar_rid), .m_axib_rdata(bar_rdata), .m_axib_rresp(bar_rresp),
        .m_axib_rlast(bar_rlast), .m_axib_rvalid(bar_rvalid), .m_axib_rready(bar_rready),
        // host memory (slave): reads from DmaRead, writes from DmaWrite
        .s_axib_awid(dma_awid), .s_axib_awaddr(dma_awaddr), .s_axib_awregion(4'd0),
        .s_axib_awlen(dma_awlen), .s_axib_awsize(dma_awsize), .s_axib_awburst(dma_awburst),
        .s_axib_awvalid(dma_awvalid), .s_axib_awready(dma_awready),
        .s_axib_wdata(dma_wdata), .s_axib_wstrb(dma_wstrb), .s_axib_wlast(dma_wlast),
        .s_axib_wvalid(dma_wvalid), .s_axib_wready(dma_wready),
        .s_axib_bid(dma_bid), .s_axib_bresp(dma_bresp), .s_axib_bvalid(dma_bvalid),
        .s_axib_bready(dma_bready),
        .s_axib_arid(dma_arid), .s_axib_araddr(dma_araddr), .s_axib_arregion(4'd0),
        .s_axib_arlen(dma_arlen), .s_axib_arsize(dma_arsize), .s_axib_arburst(dma_arburst),
        .s_axib_arvalid(dma_arvalid), .s_axib_arready(dma_arready),
        .s_axib_rid(dma_rid), .s_axib_rdata(dma_rdata), .s_axib_rresp(dma_rresp),
        .s_axib_rlast(dma_rlast), .s_axib_rvalid(dma_rvalid), .s_axib_rready(dma_rready),
        // MSI: one request at a time; the grant completes it
        .intx_msi_request(irq_valid), .msi_vector_num({3'b000, irq_vector}),
        .intx_msi_grant(msi_grant), .msi_enable()
    );
    assign irq_ready = msi_grant;

    // 512 -> 32 bits, then AXI4 -> AXI4-Lite (Xilinx infrastructure IP).
    wire [63:0] n_awaddr, n_araddr; wire [7:0] n_awlen, n_arlen;
    wire [2:0] n_awsize, n_arsize, n_awprot, n_arprot; wire [1:0] n_awburst, n_arburst;
    wire [3:0] n_awcache, n_arcache; wire n_awlock, n_arlock;
    wire n_awvalid, n_awready, n_arvalid, n_arready;
    wire [31:0] n_wdata, n_rdata; wire [3:0] n_wstrb; wire [1:0] n_bresp, n_rresp;
    wire n_wlast, n_wvalid, n_wready, n_bvalid, n_bready, n_rlast, n_rvalid, n_rready;
    bar_dwidth bar_narrow (
        .s_axi_aclk(clk), .s_axi_aresetn(rstn),
        .s_axi_awid(bar_awid), .s_axi_awaddr(bar_awaddr), .s_axi_awlen(bar_awlen),
        .s_axi_awsize(bar_awsize), .s_axi_awburst(bar_awburst), .s_axi_awlock(bar_awlock),
        .s_axi_awcache(bar_awcache), .s_axi_awprot(bar_awprot), .s_axi_awregion(4'd0),
        .s_axi_awqos(4'd0), .s_axi_awvalid(bar_awvalid), .s_axi_awready(bar_awready),
        .s_axi_wdata(bar_wdata), .s_axi_wstrb(bar_wstrb), .s_axi_wlast(bar_wlast),
        .s_axi_wvalid(bar_wvalid), .s_axi_wready(bar_wready),
        .s_axi_bid(bar_bid), .s_axi_bresp(bar_bresp), .s_axi_bvalid(bar_bvalid),
        .s_axi_bready(bar_bready),
        .s_axi_arid(bar_arid), .s_axi_araddr(bar_araddr), .s_axi_arlen(bar_arlen),
        .s_axi_arsize(bar_arsize), .s_axi_arburst(bar_arburst), .s_axi_arlock(bar_arlock),
        .s_axi_arcache(bar_arcache), .s_axi_arprot(bar_arprot), .s_axi_arregion(4'd0),
        .s_axi_arqos(4'd0), .s_axi_arvalid(bar_arvalid), .s_axi_arready(bar_arready),
        .s_axi_rid(bar_rid), .s_axi_rdata(bar_rdata), .s_axi_rresp(bar_rresp),
        .s_axi_rlast(bar_rlast), .s_axi_rvalid(bar_rvalid), .s_axi_rready(bar_rready),
        .m_axi_awaddr(n_awaddr), .m_axi_awlen(n_awlen), .m_axi_awsize(n_awsize),
        .m_axi_awburst(n_awburst), .m_axi_awlock(n_awlock), .m_axi_awcache(n_awcache),
        .m_axi_awprot(n_awprot), .m_axi_awregion(), .m_axi_awqos(),
        .m_axi_awvalid(n_awvalid), .m_axi_awready(n_awready),
        .m_axi_wdata(n_wdata), .m_axi_wstrb(n_wstrb), .m_axi_wlast(n_wlast),
        .m_axi_wvalid(n_wvalid), .m_axi_wready(n_wready),
        .m_axi_bresp(n_bresp), .m_axi_bvalid(n_bvalid), .m_axi_bready(n_bready),
        .m_axi_araddr(n_araddr), .m_axi_arlen(n_arlen), .m_axi_arsize(n_arsize),
        .m_axi_arburst(n_arburst), .m_axi_arlock(n_arlock), .m_axi_arcache(n_arcache),
        .m_axi_arprot(n_arprot), .m_axi_arregion(), .m_axi_arqos(),
        .m_axi_arvalid(n_arvalid), .m_axi_arready(n_arready),
        .m_axi_rdata(n_rdata), .m_axi_rresp(n_rresp), .m_axi_rlast(n_rlast),
        .m_axi_rvalid(n_rvalid), .m_axi_rready(n_rready));
    bar_lite bar_to_lite (
        .aclk(clk), .aresetn(rstn),
        .s_axi_awaddr(n_awaddr), .s_axi_awlen(n_awlen), .s_axi_awsize(n_awsize),
        .s_axi_awburst(n_awburst), .s_axi_awlock(n_awlock), .s_axi_awcache(n_awcache),
        .s_axi_awprot(n_awprot), .s_axi_awregion(4'd0), .s_axi_awqos(4'd0),
        .s_axi_awvalid(n_awvalid), .s_axi_awready(n_awready),
        .s_axi_wdata(n_wdata), .s_axi_wstrb(n_wstrb), .s_axi_wlast(n_wlast),
        .s_axi_wvalid(n_wvalid), .s_axi_wready(n_wready),
        .s_axi_bresp(n_bresp), .s_axi_bvalid(n_bvalid), .s_axi_bready(n_bready),
        .s_axi_araddr(n_araddr), .s_axi_arlen(n_arlen), .s_axi_arsize(n_arsize),
        .s_axi_arburst(n_arburst), .s_axi_arlock(n_arlock), .s_axi_arcache(n_arcache),
        .s_axi_arprot(n_arprot), .s_axi_arregion(4'd0), .s_axi_arqos(4'd0),
        .s_axi_arvalid(n_arvalid), .s_axi_arready(n_arready),
        .s_axi_rdata(n_rdata), .s_axi_rresp(n_rresp), .s_axi_rlast(n_rlast),
        .s_axi_rvalid(n_rvalid), .s_axi_rready(n_rready),
        .m_axi_awaddr(lite_awaddr), .m_axi_awprot(), .m_axi_awvalid(lite_awvalid),
        .m_axi_awready(lite_awready), .m_axi_wdata(lite_wdata), .m_axi_wstrb(),
        .m_axi_wvalid(lite_wvalid), .m_axi_wready(lite_wready),
        .m_axi_bresp(lite_bresp), .m_axi_bvalid(lite_bvalid), .m_axi_bready(lite_bready),
        .m_axi_araddr(lite_araddr), .m_axi_arprot(), .m_axi_arvalid(lite_arvalid),
        .m_axi_arready(lite_arready), .m_axi_rdata(lite_rdata), .m_axi_rresp(lite_rresp),
        .m_axi_rvalid(lite_rvalid), .m_axi_rready(lite_rready));

    // ---- the device's ports ----
    wire bar_wr_valid, bar_rd_valid, bar_rd_resp_valid;
    wire [15:0] bar_wr_addr, bar_rd_addr;
    wire [31:0] bar_wr_data, bar_rd_resp_data;
    wire dmar_valid, dmar_ready; wire [63:0] dmar_addr; wire [15:0] dmar_len; wire [3:0] dmar_tag;
    wire [511:0] dmac_tdata; wire [63:0] dmac_tkeep; wire dmac_tvalid, dmac_tready, dmac_tlast;
    wire [3:0] dmac_tag;
    wire [63:0] dmaw_addr; wire [15:0] dmaw_len; wire dmaw_first;
    wire [511:0] dmaw_tdata; wire [63:0] dmaw_tkeep; wire dmaw_tvalid, dmaw_tready, dmaw_tlast;
    // MAC side of the device, in the core clock
    wire [511:0] rx_tdata, tx_tdata; wire [63:0] rx_tkeep, tx_tkeep;
    wire rx_tvalid, rx_tready, rx_tlast, tx_tvalid, tx_tready, tx_tlast;

    // BAR0 offset: the low 16 bits of the AXI address (BAR0 is 64 KiB).
    metaroce_axil_bar bar (
        .clock(clk), .rst(rst),
        .s_axil_awvalid(lite_awvalid), .s_axil_awready(lite_awready),
        .s_axil_awaddr(lite_awaddr[15:0]),
        .s_axil_wvalid(lite_wvalid), .s_axil_wready(lite_wready), .s_axil_wdata(lite_wdata),
        .s_axil_bvalid(lite_bvalid), .s_axil_bready(lite_bready), .s_axil_bresp(lite_bresp),
        .s_axil_arvalid(lite_arvalid), .s_axil_arready(lite_arready),
        .s_axil_araddr(lite_araddr[15:0]),
        .s_axil_rvalid(lite_rvalid), .s_axil_rready(lite_rready), .s_axil_rdata(lite_rdata),
        .s_axil_rresp(lite_rresp),
        .bar_wr_valid(bar_wr_valid), .bar_wr_addr(bar_wr_addr), .bar_wr_data(bar_wr_data),
        .bar_rd_valid(bar_rd_valid), .bar_rd_addr(bar_rd_addr),
        .bar_rd_resp_valid(bar_rd_resp_valid), .bar_rd_resp_data(bar_rd_resp_data));

    metaroce_dma_read dma_rd (
        .clock(clk), .rst(rst),
        .m_dmar_valid(dmar_valid), .m_dmar_ready(dmar_ready), .m_dmar_addr(dmar_addr),
        .m_dmar_len(dmar_len), .m_dmar_tag(dmar_tag),
        .s_dmac_tdata(dmac_tdata), .s_dmac_tkeep(dmac_tkeep), .s_dmac_tvalid(dmac_tvalid),
        .s_dmac_tready(dmac_tready), .s_dmac_tlast(dmac_tlast), .s_dmac_tag(dmac_tag),
        .m_axi_arid(dma_arid), .m_axi_araddr(dma_araddr), .m_axi_arlen(dma_arlen),
        .m_axi_arsize(dma_arsize), .m_axi_arburst(dma_arburst),
        .m_axi_arvalid(dma_arvalid), .m_axi_arready(dma_arready),
        .m_axi_rid(dma_rid), .m_axi_rdata(dma_rdata), .m_axi_rresp(dma_rresp),
        .m_axi_rlast(dma_rlast), .m_axi_rvalid(dma_rvalid), .m_axi_rready(dma_rready),
        .r_err());

    metaroce_dma_write dma_wr (
        .clock(clk), .rst(rst),
        .m_dmaw_addr(dmaw_addr), .m_dmaw_len(dmaw_len), .m_dmaw_first(dmaw_first),
        .m_dmaw_tdata(dmaw_tdata), .m_dmaw_tkeep(dmaw_tkeep), .m_dmaw_tvalid(dmaw_tvalid),
        .m_dmaw_tready(dmaw_tready), .m_dmaw_tlast(dmaw_tlast),
        .m_axi_awid(dma_awid), .m_axi_awaddr(dma_awaddr), .m_axi_awlen(dma_awlen),
        .m_axi_awsize(dma_awsize), .m_axi_awburst(dma_awburst),
        .m_axi_awvalid(dma_awvalid), .m_axi_awready(dma_awready),
        .m_axi_wdata(dma_wdata), .m_axi_wstrb(dma_wstrb), .m_axi_wlast(dma_wlast),
        .m_axi_wvalid(dma_wvalid), .m_axi_wready(dma_wready),
        .m_axi_bresp(dma_bresp), .m_axi_bvalid(dma_bvalid), .m_axi_bready(dma_bready),
        .b_err());

    // Time: nanoseconds at 250 MHz.
    reg [63:0] now;
    always @(posedge clk) now <= rst ? 64'd0 : now + 64'd4;

    metaroce_device dev (
        .clock(clk), .rst(rst), .now(now),
        .bar_wr_valid(bar_wr_valid), .bar_wr_addr(bar_wr_addr), .bar_wr_data(bar_wr_data),
        .bar_rd_valid(bar_rd_valid), .bar_rd_addr(bar_rd_addr),
        .bar_rd_resp_valid(bar_rd_resp_valid), .bar_rd_resp_data(bar_rd_resp_data),
        .s_axis_tdata(rx_tdata), .s_axis_tkeep(rx_tkeep), .s_axis_tvalid(rx_tvalid),
        .s_axis_tready(rx_tready), .s_axis_tlast(rx_tlast),
        .m_axis_tdata(tx_tdata), .m_axis_tkeep(tx_tkeep), .m_axis_tvalid(tx_tvalid),
        .m_axis_tready(tx_tready), .m_axis_tlast(tx_tlast),
        .m_dmar_valid(dmar_valid), .m_dmar_ready(dmar_ready), .m_dmar_addr(dmar_addr),
        .m_dmar_len(dmar_len), .m_dmar_tag(dmar_tag),
        .s_dmac_tdata(dmac_tdata), .s_dmac_tkeep(dmac_tkeep), .s_dmac_tvalid(dmac_tvalid),
        .s_dmac_tready(dmac_tready), .s_dmac_tlast(dmac_tlast), .s_dmac_tag(dmac_tag),
        .m_dmaw_addr(dmaw_addr), .m_dmaw_len(dmaw_len), .m_dmaw_first(dmaw_first),
        .m_dmaw_tdata(dmaw_tdata), .m_dmaw_tkeep(dmaw_tkeep), .m_dmaw_tvalid(dmaw_tvalid),
        .m_dmaw_tready(dmaw_tready), .m_dmaw_tlast(dmaw_tlast),
        .m_irq_valid(irq_valid), .m_irq_ready(irq_ready), .m_irq_vector(irq_vector));

    // ---- CMAC: 100GBASE-R4 with RS-FEC, 512-bit AXI-Stream ----
    wire txclk, rxclk, tx_rst, rx_rst, rx_aligned;
    wire [511:0] mac_rx_tdata, mac_tx_tdata; wire [63:0] mac_rx_tkeep, mac_tx_tkeep;
    wire mac_rx_tvalid, mac_rx_tlast, mac_rx_tuser, mac_tx_tvalid, mac_tx_tready, mac_tx_tlast;
    cmac_0 mac (
        .gt_rxp_in(qsfp0_rx_p), .gt_rxn_in(qsfp0_rx_n),
        .gt_txp_out(qsfp0_tx_p), .gt_txn_out(qsfp0_tx_n),
        .gt_ref_clk_p(qsfp0_refclk_p), .gt_ref_clk_n(qsfp0_refclk_n),
        .init_clk(init_clk), .sys_reset(rst), .drp_clk(init_clk),
        .gt_txusrclk2(txclk), .gt_rxusrclk2(rxclk), .rx_clk(rxclk),
        .usr_tx_reset(tx_rst), .usr_rx_reset(rx_rst),
        .core_tx_reset(1'b0), .core_rx_reset(1'b0), .core_drp_reset(1'b0),
        .gtwiz_reset_tx_datapath(1'b0), .gtwiz_reset_rx_datapath(1'b0),
        .gt_loopback_in(12'd0),
        .drp_addr(10'd0), .drp_di(16'd0), .drp_en(1'b0), .drp_we(1'b0), .drp_do(), .drp_rdy(),
        .rx_axis_tvalid(mac_rx_tvalid), .rx_axis_tdata(mac_rx_tdata),
        .rx_axis_tkeep(mac_rx_tkeep), .rx_axis_tlast(mac_rx_tlast), .rx_axis_tuser(mac_rx_tuser),
        .tx_axis_tready(mac_tx_tready), .tx_axis_tvalid(mac_tx_tvalid),
        .tx_axis_tdata(mac_tx_tdata), .tx_axis_tkeep(mac_tx_tkeep),
        .tx_axis_tlast(mac_tx_tlast), .tx_axis_tuser(1'b0), .tx_preamblein(56'd0),
        .ctl_tx_enable(rx_aligned), .ctl_tx_send_rfi(!rx_aligned), .ctl_tx_send_lfi(1'b0),
        .ctl_tx_send_idle(1'b0), .ctl_tx_test_pattern(1'b0),
        .ctl_rx_enable(1'b1), .ctl_rx_force_resync(1'b0), .ctl_rx_test_pattern(1'b0),
        .ctl_tx_rsfec_enable(1'b1), .ctl_rx_rsfec_enable(1'b1),
        .ctl_rx_rsfec_enable_correction(1'b1), .ctl_rx_rsfec_enable_indication(1'b1),
        .ctl_rsfec_ieee_error_indication_mode(1'b0),
        .stat_rx_aligned(rx_aligned));

    // ---- RX: 322 MHz -> core clock. The CMAC cannot be held, the device
    // may hold its RX port (event FIFOs filling, §18): a frame that starts
    // while the FIFO lacks room for a jumbo frame (160 beats) is dropped
    // whole. A bad FCS (tuser on the last beat) is known only at the end;
    // such a frame is passed on, and the device's own checks (ICRC) drop it.
    wire rx_almost_full;
    reg rx_in_frame, rx_dropping;
    wire rx_first = mac_rx_tvalid && !rx_in_frame;
    wire rx_drop = rx_first ? rx_almost_full : rx_dropping;
    always @(posedge rxclk) begin
        if (rx_rst) begin
            rx_in_frame <= 1'b0;
            rx_dropping <= 1'b0;
        end else if (mac_rx_tvalid) begin
            rx_in_frame <= !mac_rx_tlast;
            rx_dropping <= rx_drop && !mac_rx_tlast;
        end
    end
    xpm_fifo_axis #(
        .CLOCKING_MODE("independent_clock"), .FIFO_DEPTH(512), .TDATA_WIDTH(512),
        .PACKET_FIFO("false"), .CDC_SYNC_STAGES(3), .FIFO_MEMORY_TYPE("ultra"),
        .PROG_FULL_THRESH(512 - 160), .USE_ADV_FEATURES("0002")
    ) rx_cdc (
        .s_aclk(rxclk), .s_aresetn(!rx_rst), .m_aclk(clk),
        .s_axis_tvalid(mac_rx_tvalid && !rx_drop), .s_axis_tready(),
        .s_axis_tdata(mac_rx_tdata), .s_axis_tkeep(mac_rx_tkeep), .s_axis_tlast(mac_rx_tlast),
        .s_axis_tstrb(64'd0), .s_axis_tid(1'b0), .s_axis_tdest(1'b0), .s_axis_tuser(1'b0),
        .m_axis_tvalid(rx_tvalid), .m_axis_tready(rx_tready), .m_axis_tdata(rx_tdata),
        .m_axis_tkeep(rx_tkeep), .m_axis_tlast(rx_tlast),
        .m_axis_tstrb(), .m_axis_tid(), .m_axis_tdest(), .m_axis_tuser(),
        .prog_full_axis(rx_almost_full),
        .injectsbiterr_axis(1'b0), .injectdbiterr_axis(1'b0));

    // ---- TX: core clock -> 322 MHz, whole frames (PACKET_FIFO): the CMAC
    // must get a frame's beats without a gap once it has started.
    xpm_fifo_axis #(
        .CLOCKING_MODE("independent_clock"), .FIFO_DEPTH(512), .TDATA_WIDTH(512),
        .PACKET_FIFO("true"), .CDC_SYNC_STAGES(3), .FIFO_MEMORY_TYPE("ultra")
    ) tx_cdc (
        .s_aclk(clk), .s_aresetn(rstn), .m_aclk(txclk),
        .s_axis_tvalid(tx_tvalid), .s_axis_tready(tx_tready), .s_axis_tdata(tx_tdata),
        .s_axis_tkeep(tx_tkeep), .s_axis_tlast(tx_tlast),
        .s_axis_tstrb(64'd0), .s_axis_tid(1'b0), .s_axis_tdest(1'b0), .s_axis_tuser(1'b0),
        .m_axis_tvalid(mac_tx_tvalid), .m_axis_tready(mac_tx_tready),
        .m_axis_tdata(mac_tx_tdata), .m_axis_tkeep(mac_tx_tkeep), .m_axis_tlast(mac_tx_tlast),
        .m_axis_tstrb(), .m_axis_tid(), .m_axis_tdest(), .m_axis_tuser(),
        .injectsbiterr_axis(1'b0), .injectdbiterr_axis(1'b0));
endmodule
`default_nettype wire
