/*
 * Checks MetaRoCE's librdmacm.so.1 from C, compiled against the system's rdma_cma.h and
 * rdma_verbs.h: both ends of connections in one process, driven through event channels
 * polled the way programs poll them. Covers what the Debian programs do not: private
 * data in the REQ, REP and REJ, a rejection, the connection to a port nobody listens
 * on, non-blocking channels (EAGAIN), rdma_init_qp_attr, rdma_migrate_id, the
 * rdma_verbs.h helpers on library-made CQs, a stray TCP peer on the listening port,
 * and clean failures of what is not supported. Prints "cm_check: OK" and exits 0 when everything holds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#define CHECK(c, ...)                                                         \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "cm_check: FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, " (errno %d)\n", errno);              \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* Waits (poll, 5 s at most) for the next event of a channel; it must be `type`. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	CHECK(poll(&p, 1, 5000) == 1, "no %s within 5 s", rdma_event_str(type));
	CHECK(rdma_get_cm_event(ch, &ev) == 0, "rdma_get_cm_event");
	CHECK(ev->event == type, "got %s (status %d), wanted %s", rdma_event_str(ev->event),
	      ev->status, rdma_event_str(type));
	return ev;
}

static void pdata_is(struct rdma_cm_event *ev, const char *want)
{
	CHECK(ev->param.conn.private_data_len >= strlen(want) + 1 &&
		      !memcmp(ev->param.conn.private_data, want, strlen(want) + 1),
	      "private data of %s is not \"%s\"", rdma_event_str(ev->event), want);
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A client id on `ch`, resolved to 127.0.0.1:port. */
static struct rdma_cm_id *resolved(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in dst = loopback(port);
	struct rdma_cm_id *id;

	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0, "resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(id->verbs && id->port_num == 1 && id->pd, "no device after address resolution");
	CHECK(rdma_get_dst_port(id) == htons(port), "dst port");
	CHECK(rdma_resolve_route(id, 2000) == 0, "resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	CHECK(id->route.num_paths == 1 && id->route.path_rec, "no path record");
	return id;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof a);
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	return a;
}

int main(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *listener, *c1, *c2, *child, *id;
	struct sockaddr_in any = loopback(0);
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	struct ibv_mr *smr, *cmr;
	char sbuf[32], cbuf[32];
	uint16_t port;
	int mask, flags;

	CHECK(sch && cch, "rdma_create_event_channel");

	/* What is not supported fails cleanly. */
	CHECK(rdma_create_id(sch, &id, NULL, RDMA_PS_UDP) == -1 && errno == EOPNOTSUPP,
	      "UD port space not refused");
	CHECK(rsocket(AF_INET, SOCK_STREAM, 0) == -1 && errno == EOPNOTSUPP, "rsocket");
	CHECK(rdma_create_id(sch, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	CHECK(rdma_resolve_route(id, 100) == -1 && errno == EINVAL, "route before address");
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&any, NULL) == -1 && errno == EOPNOTSUPP,
	      "multicast");
	/* An id moves to another channel. */
	CHECK(rdma_migrate_id(id, cch) == 0 && id->channel == cch, "rdma_migrate_id");
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");

	/* An empty non-blocking channel says EAGAIN. */
	flags = fcntl(cch->fd, F_GETFL);
	CHECK(fcntl(cch->fd, F_SETFL, flags | O_NONBLOCK) == 0, "O_NONBLOCK");
	CHECK(rdma_get_cm_event(cch, &ev) == -1 && errno == EAGAIN, "no EAGAIN");

	/* Listen on 127.0.0.1, on a port the system picks. */
	CHECK(rdma_create_id(sch, &listener, (void *)0x1234, RDMA_PS_TCP) == 0, "create listener");
	CHECK(rdma_bind_addr(listener, (struct sockaddr *)&any) == 0, "rdma_bind_addr");
	CHECK(listener->verbs, "a listener bound to 127.0.0.1 has its device");
	port = ntohs(rdma_get_src_port(listener));
	CHECK(port != 0, "no port");
	CHECK(rdma_listen(listener, 4) == 0, "rdma_listen");

	/* A stray TCP peer is refused (and reported) without disturbing the listener. */
	{
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in to = loopback(port);
		const char junk[] = "GET / HTTP/1.0\r\n\r\n";

		CHECK(s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0, "TCP connect");
		CHECK(write(s, junk, sizeof junk) == sizeof junk, "write");
		close(s);
	}

	/* Connection 1: no QP on the client; the server rejects it with private data. */
	c1 = resolved(cch, port);
	memset(&cp, 0, sizeof cp);
	cp.private_data = "req-one";
	cp.private_data_len = 8;
	cp.qp_num = 0x123;
	CHECK(rdma_connect(c1, &cp) == 0, "rdma_connect 1");
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev->listen_id == listener && ev->id != listener, "request ids");
	CHECK(ev->id->context == (void *)0x1234, "the new id has the listener's context");
	CHECK(ev->param.conn.qp_num == 0x123, "remote QPN %#x", ev->param.conn.qp_num);
	pdata_is(ev, "req-one");
	CHECK(rdma_reject(ev->id, "no-thanks", 10) == 0, "rdma_reject");
	rdma_destroy_id(ev->id);
	rdma_ack_cm_event(ev);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == 28, "reject status %d", ev->status);
	pdata_is(ev, "no-thanks");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(c1);

	/* Connection 2: QPs made by the library (and its CQs), data both ways. */
	c2 = resolved(cch, port);
	ia = qp_attr();
	CHECK(rdma_create_qp(c2, NULL, &ia) == 0, "rdma_create_qp client");
	CHECK(c2->qp && c2->send_cq && c2->recv_cq && c2->recv_cq_channel, "client QP fields");
	cmr = rdma_reg_msgs(c2, cbuf, sizeof cbuf);
	CHECK(cmr, "rdma_reg_msgs client");
	CHECK(rdma_post_recv(c2, NULL, cbuf, sizeof cbuf, cmr) == 0, "post recv client");
	memset(&cp, 0, sizeof cp);
	cp.private_data = "req-two";
	cp.private_data_len = 8;
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = cp.rnr_retry_count = 7;
	CHECK(rdma_connect(c2, &cp) == 0, "rdma_connect 2");

	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	pdata_is(ev, "req-two");
	CHECK(ev->param.conn.qp_num == c2->qp->qp_num, "remote QPN");
	CHECK(ev->param.conn.responder_resources == 1 && ev->param.conn.initiator_depth == 1,
	      "depths");
	CHECK(rdma_get_dst_port(child) == rdma_get_src_port(c2), "the peer's port");
	rdma_ack_cm_event(ev);
	ia = qp_attr();
	CHECK(rdma_create_qp(child, NULL, &ia) == 0, "rdma_create_qp server");
	smr = rdma_reg_msgs(child, sbuf, sizeof sbuf);
	CHECK(smr, "rdma_reg_msgs server");
	CHECK(rdma_post_recv(child, NULL, sbuf, sizeof sbuf, smr) == 0, "post recv server");
	memset(&cp, 0, sizeof cp);
	cp.private_data = "rep-two";
	cp.private_data_len = 8;
	CHECK(rdma_accept(child, &cp) == 0, "rdma_accept");

	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	pdata_is(ev, "rep-two");
	CHECK(ev->param.conn.qp_num == child->qp->qp_num, "the server's QPN");
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED));

	/* What rdma_init_qp_attr says is what the connection uses. */
	qa.qp_state = IBV_QPS_RTR;
	CHECK(rdma_init_qp_attr(child, &qa, &mask) == 0, "rdma_init_qp_attr RTR");
	CHECK(qa.dest_qp_num == c2->qp->qp_num && (mask & IBV_QP_DEST_QPN) &&
		      qa.ah_attr.is_global && qa.ah_attr.dlid != 0,
	      "RTR attributes");
	qa.qp_state = IBV_QPS_RTS;
	CHECK(rdma_init_qp_attr(child, &qa, &mask) == 0 && (mask & IBV_QP_SQ_PSN), "RTS");

	/* Data, with the rdma_verbs.h helpers on the library's CQs and channels. */
	strcpy(cbuf + 16, "ping");
	CHECK(rdma_post_send(c2, NULL, cbuf + 16, 5, cmr, 0) == 0, "post send client");
	CHECK(rdma_get_send_comp(c2, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "send comp");
	CHECK(rdma_get_recv_comp(child, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.byte_len == 5 && !strcmp(sbuf, "ping"),
	      "server received \"%s\"", sbuf);
	strcpy(sbuf + 16, "pong");
	CHECK(rdma_post_send(child, NULL, sbuf + 16, 5, smr, 0) == 0, "post send server");
	CHECK(rdma_get_send_comp(child, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "send comp");
	CHECK(rdma_get_recv_comp(c2, &wc) == 1 && !strcmp(cbuf, "pong"), "client received");

	/* Disconnect: both sides see DISCONNECTED once. */
	CHECK(rdma_disconnect(c2) == 0, "rdma_disconnect client");
	rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	CHECK(rdma_disconnect(child) == 0, "rdma_disconnect server");
	CHECK(rdma_get_cm_event(cch, &ev) == -1 && errno == EAGAIN, "a second DISCONNECTED");

	rdma_dereg_mr(cmr);
	rdma_dereg_mr(smr);
	rdma_destroy_qp(c2);
	rdma_destroy_qp(child);
	CHECK(rdma_destroy_id(child) == 0 && rdma_destroy_id(c2) == 0, "rdma_destroy_id");
	CHECK(rdma_destroy_id(listener) == 0, "destroy listener");

	/* Nobody listens there any more: the kernel's answer is REJECTED, reason 8. */
	c1 = resolved(cch, port);
	memset(&cp, 0, sizeof cp);
	cp.qp_num = 1;
	CHECK(rdma_connect(c1, &cp) == 0, "rdma_connect to no listener");
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == 8, "status %d", ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(c1);

	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	printf("cm_check: OK\n");
	return 0;
}
