/*
 * A Verbs program compiled against the system's rdma-core v44 <infiniband/verbs.h> and
 * run on MetaRoCE's libibverbs.so.1. Two contexts on the first device (two NICs) are
 * connected with an RC QP each; the program checks the data of RDMA WRITE (signaled and
 * unsignaled), WRITE with immediate, SEND (plain, inline, with immediate) and RDMA READ,
 * completion events through a channel, scatter/gather lists of up to 16 elements, a
 * shared receive queue feeding two QPs and its limit event, atomics, the ibv_wr_* API, and
 * that bad arguments and unsupported verbs fail cleanly instead of crashing. Prints "verbs_check: OK" and exits 0 on success.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define BUF (1 << 20)
#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: check failed: %s (errno %d)\n", \
				__FILE__, __LINE__, #c, errno);               \
			exit(1);                                              \
		}                                                             \
	} while (0)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	uint16_t lid;
	union ibv_gid gid;
};

static void open_side(struct ibv_device *dev, struct side *s)
{
	struct ibv_port_attr port;
	struct ibv_qp_init_attr init = {0};
	struct ibv_qp_attr attr = {0};

	s->ctx = ibv_open_device(dev);
	CHECK(s->ctx);
	CHECK(ibv_query_port(s->ctx, 1, &port) == 0);
	CHECK(port.state == IBV_PORT_ACTIVE && port.link_layer == IBV_LINK_LAYER_ETHERNET);
	s->lid = port.lid;
	CHECK(ibv_query_gid(s->ctx, 1, 0, &s->gid) == 0);
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd);
	s->buf = aligned_alloc(4096, BUF);
	CHECK(s->buf);
	memset(s->buf, 0xee, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(s->mr && s->mr->addr == s->buf && s->mr->length == BUF);
	CHECK(s->buf[0] == 0xee && s->buf[BUF - 1] == 0xee); /* registration keeps data */
	s->ch = ibv_create_comp_channel(s->ctx);
	CHECK(s->ch);
	s->cq = ibv_create_cq(s->ctx, 64, s, s->ch, 0);
	CHECK(s->cq);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 64;
	init.cap.max_recv_wr = 64;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = 64;
	s->qp = ibv_create_qp(s->pd, &init);
	CHECK(s->qp && init.cap.max_inline_data >= 64);
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	CHECK(ibv_modify_qp(s->qp, &attr,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS) == 0);
	CHECK(s->qp->state == IBV_QPS_INIT);
}

/* Posts a receive of `len` bytes at `off` of `s`'s buffer on `qp`. */
static void rwr_recv(struct side *s, struct ibv_qp *qp, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {(uintptr_t)(s->buf + off), len, s->mr->lkey};
	struct ibv_recv_wr wr = {0}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
}

/* Moves `qp` of side `s` to RTS towards `peer_qp` of side `peer`. */
static void connect_qp(struct ibv_qp *qp, struct side *peer, struct ibv_qp *peer_qp)
{
	struct ibv_qp_attr attr = {0};
	struct ibv_qp_init_attr init;

	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_4096;
	attr.dest_qp_num = peer_qp->qp_num;
	attr.rq_psn = 100;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = peer->gid;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.dlid = peer->lid;
	attr.ah_attr.port_num = 1;
	CHECK(ibv_modify_qp(qp, &attr,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 100;
	attr.max_rd_atomic = 16;
	CHECK(ibv_modify_qp(qp, &attr,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				    IBV_QP_MAX_QP_RD_ATOMIC) == 0);
	CHECK(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0);
	CHECK(attr.qp_state == IBV_QPS_RTS && attr.dest_qp_num == peer_qp->qp_num);
}

static void connect_side(struct side *s, struct side *peer)
{
	connect_qp(s->qp, peer, peer->qp);
}

/* A QP in INIT on side `s`, its receives from `srq` (or its own when NULL). */
static struct ibv_qp *new_qp(struct side *s, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {0};
	struct ibv_qp_attr attr = {0};
	struct ibv_qp *qp;

	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.srq = srq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &init);
	CHECK(qp && qp->srq == srq);
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == 0);
	return qp;
}

/* Busy-polls one completion. */
static struct ibv_wc wait_wc(struct side *s)
{
	struct ibv_wc wc;
	long spins = 0;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		CHECK(++spins < 200000000L);
	CHECK(n == 1);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "completion %s\n", ibv_wc_status_str(wc.status));
	CHECK(wc.status == IBV_WC_SUCCESS);
	return wc;
}

static void post(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t off,
		 uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags, uint32_t imm)
{
	struct ibv_sge sge = {(uintptr_t)(s->buf + off), len, s->mr->lkey};
	struct ibv_send_wr wr = {0}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	CHECK(ibv_post_send(s->qp, &wr, &bad) == 0);
}

static void post_recv(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	rwr_recv(s, s->qp, wr_id, off, len);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 12));
}

static void traffic(struct side *a, struct side *b)
{
	uint64_t bbase = (uintptr_t)b->buf;
	struct ibv_wc wc;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	/* WRITE 512 KiB as 8 unsignaled pieces and one signaled. */
	fill(a->buf, 512 << 10, 1);
	for (int i = 0; i < 8; i++)
		post(a, IBV_WR_RDMA_WRITE, i, i << 16, 1 << 16, bbase + (i << 16),
		     b->mr->rkey, i == 7 ? IBV_SEND_SIGNALED : 0, 0);
	wc = wait_wc(a);
	CHECK(wc.wr_id == 7 && wc.opcode == IBV_WC_RDMA_WRITE);
	CHECK(memcmp(a->buf, b->buf, 512 << 10) == 0);

	/* SEND with immediate, completion event through the channel. */
	fill(a->buf + (600 << 10), 10000, 2);
	post_recv(b, 77, 700 << 10, 16384);
	CHECK(ibv_req_notify_cq(b->cq, 0) == 0);
	post(a, IBV_WR_SEND_WITH_IMM, 5, 600 << 10, 10000, 0, 0, IBV_SEND_SIGNALED,
	     0xabcd);
	CHECK(ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx) == 0);
	CHECK(ev_cq == b->cq && ev_ctx == b);
	ibv_ack_cq_events(ev_cq, 1);
	wc = wait_wc(b);
	CHECK(wc.wr_id == 77 && wc.opcode == IBV_WC_RECV && wc.byte_len == 10000);
	CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0xabcd);
	CHECK(wc.qp_num == b->qp->qp_num);
	CHECK(memcmp(a->buf + (600 << 10), b->buf + (700 << 10), 10000) == 0);
	CHECK(wait_wc(a).wr_id == 5);

	/* Inline SEND: the source may change right after posting. */
	post_recv(b, 78, 720 << 10, 64);
	memcpy(a->buf + (610 << 10), "inline bytes!", 13);
	post(a, IBV_WR_SEND, 6, 610 << 10, 13, 0, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0);
	memset(a->buf + (610 << 10), 0, 13);
	CHECK(wait_wc(a).wr_id == 6);
	wc = wait_wc(b);
	CHECK(wc.wr_id == 78 && wc.byte_len == 13 && !(wc.wc_flags & IBV_WC_WITH_IMM));
	CHECK(memcmp(b->buf + (720 << 10), "inline bytes!", 13) == 0);

	/* WRITE with immediate consumes a receive. */
	post_recv(b, 79, 0, 0);
	fill(a->buf + (800 << 10), 4096, 3);
	post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 8, 800 << 10, 4096, bbase + (900 << 10),
	     b->mr->rkey, IBV_SEND_SIGNALED, 0x55);
	CHECK(wait_wc(a).wr_id == 8);
	wc = wait_wc(b);
	CHECK(wc.wr_id == 79 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(ntohl(wc.imm_data) == 0x55);
	CHECK(memcmp(a->buf + (800 << 10), b->buf + (900 << 10), 4096) == 0);

	/* READ back 256 KiB of what B holds. */
	memset(a->buf + (512 << 10), 0, 256 << 10);
	post(a, IBV_WR_RDMA_READ, 9, 512 << 10, 256 << 10, bbase, b->mr->rkey,
	     IBV_SEND_SIGNALED, 0);
	wc = wait_wc(a);
	CHECK(wc.wr_id == 9 && wc.opcode == IBV_WC_RDMA_READ);
	CHECK(memcmp(a->buf + (512 << 10), b->buf, 256 << 10) == 0);
}

/* Elements of the given lengths at `off` of the side's buffer, 64 bytes apart. */
static int spread(struct side *s, struct ibv_sge *sg, uint32_t off, const uint32_t *lens,
		  int n)
{
	for (int i = 0; i < n; i++) {
		sg[i].addr = (uintptr_t)(s->buf + off);
		sg[i].length = lens[i];
		sg[i].lkey = s->mr->lkey;
		off += lens[i] + 64;
	}
	return n;
}

/* Copies the bytes of `n` elements, in order, to `out`; returns how many. */
static size_t gathered(const struct ibv_sge *sg, int n, uint8_t *out)
{
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		memcpy(out + at, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		at += sg[i].length;
	}
	return at;
}

/* SEND gathered from 3 elements into a receive of 4; WRITE gathered from 16 elements;
 * READ scattered into 16; the device's and the QP's limits are reported, and a list
 * longer than them is refused. */
static void scatter_gather(struct side *a, struct side *b)
{
	static const uint32_t src_lens[3] = {5000, 100, 7001};
	static const uint32_t dst_lens[4] = {3000, 1, 8000, 2000};
	static uint8_t want[1 << 18], got[1 << 18];
	struct ibv_sge sg[17], rsg[16];
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_recv_wr rwr = {0}, *rbad = NULL;
	struct ibv_device_attr dattr;
	struct ibv_device_attr_ex xattr;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	uint32_t lens[16];
	size_t n;

	CHECK(ibv_query_device(a->ctx, &dattr) == 0 && dattr.max_sge == 16);
	memset(&xattr, 0xff, sizeof(xattr));
	CHECK(ibv_query_device_ex(a->ctx, NULL, &xattr) == 0);
	CHECK(xattr.orig_attr.max_sge == 16 && xattr.orig_attr.vendor_id == dattr.vendor_id);
	CHECK(xattr.phys_port_cnt_ex == 1 && xattr.max_dm_size == 0 && xattr.odp_caps.general_caps == 0);
	CHECK(ibv_query_qp(a->qp, &attr, IBV_QP_CAP, &init) == 0);
	CHECK(attr.cap.max_send_sge == 16 && attr.cap.max_recv_sge == 16);

	fill(a->buf + (100 << 10), 20000, 4);
	memset(b->buf + (100 << 10), 0, 20000);
	rwr.wr_id = 80;
	rwr.sg_list = rsg;
	rwr.num_sge = spread(b, rsg, 100 << 10, dst_lens, 4);
	CHECK(ibv_post_recv(b->qp, &rwr, &rbad) == 0);
	wr.wr_id = 10;
	wr.sg_list = sg;
	wr.num_sge = spread(a, sg, 100 << 10, src_lens, 3);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK(ibv_post_send(a->qp, &wr, &bad) == 0);
	CHECK(wait_wc(a).wr_id == 10);
	wc = wait_wc(b);
	CHECK(wc.wr_id == 80 && wc.byte_len == 12101);
	n = gathered(sg, 3, want);
	CHECK(gathered(rsg, 4, got) == 13001 && memcmp(got, want, n) == 0);
	CHECK(got[n] == 0 && b->buf[(100 << 10) + 3000] == 0); /* nothing past, or between */

	for (int i = 0; i < 16; i++)
		lens[i] = 1000 + 97 * i;
	fill(a->buf + (200 << 10), 60000, 5);
	wr.wr_id = 11;
	wr.num_sge = spread(a, sg, 200 << 10, lens, 16);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(b->buf + (300 << 10));
	wr.wr.rdma.rkey = b->mr->rkey;
	CHECK(ibv_post_send(a->qp, &wr, &bad) == 0);
	CHECK(wait_wc(a).wr_id == 11);
	n = gathered(sg, 16, want);
	CHECK(memcmp(b->buf + (300 << 10), want, n) == 0);
	memset(a->buf + (400 << 10), 0, 60000);
	wr.wr_id = 12;
	wr.num_sge = spread(a, sg, 400 << 10, lens, 16);
	wr.opcode = IBV_WR_RDMA_READ;
	CHECK(ibv_post_send(a->qp, &wr, &bad) == 0);
	wc = wait_wc(a);
	CHECK(wc.wr_id == 12 && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == n);
	CHECK(gathered(sg, 16, got) == n && memcmp(got, want, n) == 0);

	/* 17 elements: refused, named in bad_wr, nothing posted. */
	wr.num_sge = 17;
	sg[16] = sg[0];
	CHECK(ibv_post_send(a->qp, &wr, &bad) == EINVAL && bad == &wr);
	rwr.num_sge = 17;
	rwr.sg_list = sg;
	CHECK(ibv_post_recv(b->qp, &rwr, &rbad) == EINVAL && rbad == &rwr);
}

/* An SRQ on `b` feeds the receives of two QPs connected to two QPs of `a`; its limit
 * fires IBV_EVENT_SRQ_LIMIT_REACHED once; it cannot go while its QPs exist. */
static void shared_receive_queue(struct side *a, struct side *b)
{
	struct ibv_srq_init_attr sinit = {0};
	struct ibv_srq_attr sattr = {0};
	struct ibv_recv_wr rwr = {0}, *rbad = NULL;
	struct ibv_sge sge;
	struct ibv_async_event ev;
	struct ibv_qp *qa[2], *qb[2];
	struct ibv_srq *srq;
	struct ibv_wc wc;
	int seen = 0;

	sinit.srq_context = b;
	sinit.attr.max_wr = 8;
	sinit.attr.max_sge = 2;
	srq = ibv_create_srq(b->pd, &sinit);
	CHECK(srq && srq->srq_context == b && sinit.attr.max_wr >= 8 && sinit.attr.max_sge >= 2);
	for (int i = 0; i < 2; i++) {
		qa[i] = new_qp(a, NULL);
		qb[i] = new_qp(b, srq);
		connect_qp(qa[i], b, qb[i]);
		connect_qp(qb[i], a, qa[i]);
	}
	for (int i = 0; i < 4; i++) {
		sge = (struct ibv_sge){(uintptr_t)(b->buf + (640 << 10) + i * 8192), 8192,
				       b->mr->lkey};
		rwr.wr_id = 200 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		CHECK(ibv_post_srq_recv(srq, &rwr, &rbad) == 0);
	}
	/* A QP with an SRQ takes no receives of its own. */
	CHECK(ibv_post_recv(qb[0], &rwr, &rbad) != 0 && rbad == &rwr);
	sattr.srq_limit = 3;
	CHECK(ibv_modify_srq(srq, &sattr, IBV_SRQ_LIMIT) == 0);
	CHECK(ibv_query_srq(srq, &sattr) == 0 && sattr.srq_limit == 3 && sattr.max_wr >= 8);
	sattr.max_wr = 100;
	CHECK(ibv_modify_srq(srq, &sattr, IBV_SRQ_MAX_WR) == EINVAL);
	fill(a->buf + (640 << 10), 3 * 8192, 6);
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = {(uintptr_t)(a->buf + (640 << 10) + i * 8192), 3000 + i,
				    a->mr->lkey};
		struct ibv_send_wr wr = {0}, *bad = NULL;

		wr.wr_id = 20 + i;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		CHECK(ibv_post_send(qa[i % 2], &wr, &bad) == 0);
		CHECK(wait_wc(a).wr_id == (uint64_t)(20 + i));
	}
	for (int i = 0; i < 3; i++) {
		wc = wait_wc(b);
		CHECK(wc.wr_id >= 200 && wc.wr_id < 204 && !(seen & (1 << (wc.wr_id - 200))));
		seen |= 1 << (wc.wr_id - 200);
		CHECK(wc.byte_len >= 3000 && wc.byte_len < 3003);
		CHECK(wc.qp_num == qb[(wc.byte_len - 3000) % 2]->qp_num);
		CHECK(memcmp(b->buf + (640 << 10) + (wc.wr_id - 200) * 8192,
			     a->buf + (640 << 10) + (wc.byte_len - 3000) * 8192, wc.byte_len) == 0);
	}
	/* Two taken out of four left two: below the limit of 3, reported once. */
	CHECK(fcntl(b->ctx->async_fd, F_SETFL,
		    fcntl(b->ctx->async_fd, F_GETFL) & ~O_NONBLOCK) == 0);
	CHECK(ibv_get_async_event(b->ctx, &ev) == 0);
	CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq);
	ibv_ack_async_event(&ev);
	CHECK(ibv_query_srq(srq, &sattr) == 0 && sattr.srq_limit == 0);
	CHECK(ibv_destroy_srq(srq) == EBUSY);
	for (int i = 0; i < 2; i++) {
		CHECK(ibv_destroy_qp(qa[i]) == 0);
		CHECK(ibv_destroy_qp(qb[i]) == 0);
	}
	CHECK(ibv_destroy_srq(srq) == 0);
}

/* Fetch-and-add and compare-and-swap on an 8-byte word of `b`, the found values landing
 * in `a`'s buffer; the device reports IBV_ATOMIC_HCA. */
static void atomics(struct side *a, struct side *b)
{
	struct ibv_device_attr dattr;
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_sge sge = {(uintptr_t)(a->buf + (900 << 10)), 8, a->mr->lkey};
	uint64_t *target = (uint64_t *)(b->buf + (960 << 10));
	uint64_t *found = (uint64_t *)(a->buf + (900 << 10));
	struct ibv_wc wc;

	CHECK(ibv_query_device(a->ctx, &dattr) == 0 && dattr.atomic_cap == IBV_ATOMIC_HCA);
	*target = 40;
	wr.wr_id = 30;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = 2;
	CHECK(ibv_post_send(a->qp, &wr, &bad) == 0);
	wc = wait_wc(a);
	CHECK(wc.wr_id == 30 && wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8);
	CHECK(*found == 40 && *target == 42);
	wr.wr_id = 31;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 0x1122334455667788ULL;
	CHECK(ibv_post_send(a->qp, &wr, &bad) == 0);
	wc = wait_wc(a);
	CHECK(wc.wr_id == 31 && wc.opcode == IBV_WC_COMP_SWAP);
	CHECK(*found == 42 && *target == 0x1122334455667788ULL);
}

/* A QP of `a` from ibv_create_qp_ex with the ibv_wr_* API, connected to a plain QP of
 * `b`: a WRITE from an SGE list, an inline SEND with immediate, a READ and a
 * fetch-and-add built in one ibv_wr_start .. ibv_wr_complete; an operation the QP was
 * not created for, or one MetaRoCE lacks, makes ibv_wr_complete fail and posts nothing. */
static void extended_qp(struct side *a, struct side *b)
{
	struct ibv_qp_init_attr_ex xinit = {0};
	struct ibv_sge sg[2];
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	uint64_t bb = (uintptr_t)b->buf;
	int n = 0;

	xinit.send_cq = a->cq;
	xinit.recv_cq = a->cq;
	xinit.qp_type = IBV_QPT_RC;
	xinit.cap.max_send_wr = 16;
	xinit.cap.max_recv_wr = 16;
	xinit.cap.max_send_sge = 2;
	xinit.cap.max_recv_sge = 1;
	xinit.cap.max_inline_data = 64;
	xinit.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xinit.pd = a->pd;
	xinit.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM |
			       IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	qa = ibv_create_qp_ex(a->ctx, &xinit);
	CHECK(qa && xinit.cap.max_send_sge == 16);
	qx = ibv_qp_to_qp_ex(qa);
	CHECK(qx && &qx->qp_base == qa);
	/* Operations MetaRoCE lacks are refused at creation. */
	xinit.send_ops_flags |= IBV_QP_EX_WITH_BIND_MW;
	CHECK(ibv_create_qp_ex(a->ctx, &xinit) == NULL && errno == EOPNOTSUPP);
	{
		struct ibv_qp_attr attr = {0};

		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		CHECK(ibv_modify_qp(qa, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == 0);
	}
	qb = new_qp(b, NULL);
	connect_qp(qa, b, qb);
	connect_qp(qb, a, qa);

	fill(a->buf + (700 << 10), 6000, 7);
	memset(b->buf + (500 << 10), 0, 8192);
	memset(a->buf + (720 << 10), 0, 8);
	*(uint64_t *)(b->buf + (600 << 10)) = 100;
	sg[0] = (struct ibv_sge){(uintptr_t)(a->buf + (700 << 10)), 1000, a->mr->lkey};
	sg[1] = (struct ibv_sge){(uintptr_t)(a->buf + (700 << 10) + 2000), 3000, a->mr->lkey};
	rwr_recv(b, qb, 90, 800 << 10, 64);
	ibv_wr_start(qx);
	qx->wr_id = 40;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, b->mr->rkey, bb + (500 << 10));
	ibv_wr_set_sge_list(qx, 2, sg);
	qx->wr_id = 41;
	ibv_wr_send_imm(qx, htonl(0x77));
	ibv_wr_set_inline_data(qx, "built inline", 12);
	qx->wr_id = 42;
	ibv_wr_rdma_read(qx, b->mr->rkey, bb + (500 << 10));
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)(a->buf + (710 << 10)), 4000);
	qx->wr_id = 43;
	ibv_wr_atomic_fetch_add(qx, b->mr->rkey, bb + (600 << 10), 5);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)(a->buf + (720 << 10)), 8);
	CHECK(ibv_wr_complete(qx) == 0);
	for (uint64_t id = 40; id < 44; id++) {
		wc = wait_wc(a);
		CHECK(wc.wr_id == id);
	}
	CHECK(memcmp(b->buf + (500 << 10), a->buf + (700 << 10), 1000) == 0);
	CHECK(memcmp(b->buf + (500 << 10) + 1000, a->buf + (700 << 10) + 2000, 3000) == 0);
	CHECK(memcmp(a->buf + (710 << 10), b->buf + (500 << 10), 4000) == 0);
	CHECK(*(uint64_t *)(a->buf + (720 << 10)) == 100);
	CHECK(*(uint64_t *)(b->buf + (600 << 10)) == 105);
	wc = wait_wc(b);
	CHECK(wc.wr_id == 90 && wc.byte_len == 12 && ntohl(wc.imm_data) == 0x77);
	CHECK(memcmp(b->buf + (800 << 10), "built inline", 12) == 0);

	/* A plain SEND was not asked for, LOCAL_INV does not exist here: nothing goes. */
	ibv_wr_start(qx);
	qx->wr_id = 50;
	ibv_wr_rdma_write(qx, b->mr->rkey, bb);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)a->buf, 8);
	ibv_wr_send(qx);
	CHECK(ibv_wr_complete(qx) == EINVAL);
	ibv_wr_start(qx);
	ibv_wr_local_inv(qx, 1);
	CHECK(ibv_wr_complete(qx) == EOPNOTSUPP);
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, b->mr->rkey, bb);
	ibv_wr_abort(qx);
	while (ibv_poll_cq(a->cq, 1, &wc) == 1)
		n++;
	CHECK(n == 0);
	CHECK(ibv_destroy_qp(qa) == 0 && ibv_destroy_qp(qb) == 0);
}

/* A SEND whose second element has a wrong lkey completes with a local protection error
 * and moves the QP to ERR; nothing reaches the peer. Leaves `s`'s QP unusable. */
static void local_protection_error(struct side *s, struct side *peer)
{
	static const uint32_t lens[2] = {100, 100};
	struct ibv_sge sg[2];
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	long spins = 0;
	int n;

	wr.wr_id = 98;
	wr.sg_list = sg;
	wr.num_sge = spread(s, sg, 0, lens, 2);
	sg[1].lkey ^= 0x5a5a;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK(ibv_post_send(s->qp, &wr, &bad) == 0);
	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		CHECK(++spins < 200000000L);
	CHECK(n == 1 && wc.wr_id == 98 && wc.status == IBV_WC_LOC_PROT_ERR);
	CHECK(ibv_query_qp(s->qp, &attr, IBV_QP_STATE, &init) == 0);
	CHECK(attr.qp_state == IBV_QPS_ERR);
	CHECK(ibv_poll_cq(peer->cq, 1, &wc) == 0);
}

static void bad_arguments(struct side *s)
{
	struct ibv_qp_init_attr init = {0};
	struct ibv_qp_attr attr = {0};
	struct ibv_port_attr port;
	struct ibv_device_attr dattr;
	union ibv_gid gid;
	struct ibv_wc wc;
	void *garbage = (void *)0x1000;
	struct ibv_send_wr swr = {0}, *sbad = NULL;

	errno = 0;
	CHECK(ibv_open_device(NULL) == NULL && errno == EINVAL);
	CHECK(ibv_open_device(garbage) == NULL);
	CHECK(ibv_alloc_pd(NULL) == NULL && errno == EINVAL);
	CHECK(ibv_alloc_pd(garbage) == NULL && errno == EINVAL);
	CHECK(ibv_dealloc_pd(garbage) == EINVAL);
	CHECK(ibv_query_device(garbage, &dattr) == EINVAL);
	CHECK(ibv_query_device(s->ctx, NULL) == EINVAL);
	CHECK(ibv_query_port(s->ctx, 2, &port) == EINVAL);
	CHECK(ibv_query_gid(s->ctx, 1, 5, &gid) == -1);
	CHECK(ibv_reg_mr(s->pd, NULL, 100, 0) == NULL && errno == EINVAL);
	CHECK(ibv_reg_mr(s->pd, s->buf, 100, IBV_ACCESS_REMOTE_WRITE) == NULL);
	CHECK(ibv_reg_mr(garbage, s->buf, 100, 0) == NULL);
	/* A second registration of registered bytes is refused. */
	CHECK(ibv_reg_mr(s->pd, s->buf + 4096, 100, IBV_ACCESS_LOCAL_WRITE) == NULL &&
	      errno == EINVAL);
	CHECK(ibv_dereg_mr(garbage) == EINVAL);
	CHECK(ibv_create_cq(s->ctx, 0, NULL, NULL, 0) == NULL);
	CHECK(ibv_create_cq(s->ctx, 16, NULL, garbage, 0) == NULL);
	CHECK(ibv_destroy_cq(garbage) == EINVAL);
	CHECK(ibv_destroy_cq(s->cq) == EBUSY); /* the QP still uses it */
	CHECK(ibv_dealloc_pd(s->pd) == EBUSY); /* MR and QP still use it */
	CHECK(ibv_destroy_comp_channel(s->ch) == EBUSY);
	CHECK(ibv_create_qp(s->pd, NULL) == NULL && errno == EINVAL);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.qp_type = IBV_QPT_UD;
	init.cap.max_send_wr = 1;
	CHECK(ibv_create_qp(s->pd, &init) == NULL && errno == EOPNOTSUPP);
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_sge = 17;
	CHECK(ibv_create_qp(s->pd, &init) == NULL && errno == EINVAL);
	init.cap.max_send_sge = 1;
	init.send_cq = garbage;
	CHECK(ibv_create_qp(s->pd, &init) == NULL && errno == EINVAL);
	CHECK(ibv_destroy_qp(garbage) == EINVAL);
	CHECK(ibv_modify_qp(s->qp, NULL, IBV_QP_STATE) == EINVAL);
	attr.qp_state = IBV_QPS_SQD;
	CHECK(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE) == EOPNOTSUPP);
	attr.qp_state = 42;
	CHECK(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE) == EINVAL);
	CHECK(ibv_poll_cq(s->cq, 1, NULL) < 0 || ibv_poll_cq(s->cq, 0, NULL) == 0);
	CHECK(ibv_poll_cq(s->cq, 1, &wc) == 0);
	/* An unsupported opcode is refused and named in bad_wr. */
	swr.opcode = IBV_WR_BIND_MW;
	CHECK(ibv_post_send(s->qp, &swr, &sbad) == EOPNOTSUPP && sbad == &swr);
	/* Unsupported verbs. */
	CHECK(ibv_create_srq(s->pd, NULL) == NULL && errno == EINVAL);
	CHECK(ibv_create_ah(s->pd, NULL) == NULL && errno == EOPNOTSUPP);
	CHECK(ibv_qp_to_qp_ex(s->qp) == NULL);
	CHECK(ibv_attach_mcast(s->qp, &gid, 0) == EOPNOTSUPP);
	CHECK(ibv_alloc_mw(s->pd, IBV_MW_TYPE_1) == NULL);
	CHECK(ibv_close_device(garbage) == -1);
	ibv_free_device_list(garbage); /* ignored */
	{
		struct ibv_async_event ev;
		int fl = fcntl(s->ctx->async_fd, F_GETFL);

		CHECK(fcntl(s->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
		CHECK(ibv_get_async_event(s->ctx, &ev) == -1 && errno == EAGAIN);
	}
}

/* A WRITE with a wrong rkey fails with a remote access error, moves the QP to ERR and
 * raises a QP fatal event. Leaves `a`'s QP unusable. */
static void remote_access_error(struct side *a, struct side *b)
{
	struct ibv_wc wc;
	struct ibv_async_event ev;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	long spins = 0;
	int n;

	post(a, IBV_WR_RDMA_WRITE, 99, 0, 4096, (uintptr_t)b->buf, b->mr->rkey + 1000,
	     IBV_SEND_SIGNALED, 0);
	while ((n = ibv_poll_cq(a->cq, 1, &wc)) == 0)
		CHECK(++spins < 200000000L);
	CHECK(n == 1 && wc.wr_id == 99 && wc.status == IBV_WC_REM_ACCESS_ERR);
	CHECK(strcmp(ibv_wc_status_str(wc.status), "remote access error") == 0);
	CHECK(ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init) == 0);
	CHECK(attr.qp_state == IBV_QPS_ERR && a->qp->state == IBV_QPS_ERR);
	/* Blocking again (bad_arguments made it non-blocking): wait for the event. */
	CHECK(fcntl(a->ctx->async_fd, F_SETFL,
		    fcntl(a->ctx->async_fd, F_GETFL) & ~O_NONBLOCK) == 0);
	CHECK(ibv_get_async_event(a->ctx, &ev) == 0);
	CHECK(ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == a->qp);
	ibv_ack_async_event(&ev);
}

static void close_side(struct side *s)
{
	CHECK(ibv_destroy_qp(s->qp) == 0);
	CHECK(ibv_destroy_cq(s->cq) == 0);
	CHECK(ibv_destroy_comp_channel(s->ch) == 0);
	CHECK(ibv_dereg_mr(s->mr) == 0);
	CHECK(ibv_dealloc_pd(s->pd) == 0);
	CHECK(ibv_close_device(s->ctx) == 0);
	free(s->buf);
}

int main(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct side a, b;

	CHECK(list && n >= 1 && list[n] == NULL);
	CHECK(strcmp(ibv_get_device_name(list[0]), "metaroce0") == 0);
	open_side(list[0], &a);
	open_side(list[0], &b);
	CHECK(a.lid != b.lid); /* each context is its own NIC, its UDP port the LID */
	connect_side(&a, &b);
	connect_side(&b, &a);
	traffic(&a, &b);
	traffic(&b, &a);
	scatter_gather(&a, &b);
	scatter_gather(&b, &a);
	shared_receive_queue(&a, &b);
	atomics(&a, &b);
	extended_qp(&a, &b);
	bad_arguments(&a);
	remote_access_error(&a, &b);
	local_protection_error(&b, &a);
	close_side(&a);
	close_side(&b);
	ibv_free_device_list(list);
	printf("verbs_check: OK\n");
	return 0;
}
