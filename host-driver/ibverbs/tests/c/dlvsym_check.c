/*
 * Loads libibverbs the way NCCL and RCCL do: dlopen("libibverbs.so"), then each symbol
 * with dlvsym() at the version the loader asks for. Prints "dlvsym_check: OK".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct ibv_device;

static void *sym(void *h, const char *name, const char *ver)
{
	void *p = dlvsym(h, name, ver);
	if (!p) {
		fprintf(stderr, "dlvsym(%s, %s) failed: %s\n", name, ver, dlerror());
		return NULL;
	}
	return p;
}

int main(void)
{
	static const char *v11[] = {
		"ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name",
		"ibv_open_device", "ibv_close_device", "ibv_query_device", "ibv_query_port",
		"ibv_query_gid", "ibv_alloc_pd", "ibv_dealloc_pd", "ibv_reg_mr",
		"ibv_dereg_mr", "ibv_create_cq", "ibv_destroy_cq", "ibv_create_qp",
		"ibv_modify_qp", "ibv_destroy_qp", "ibv_fork_init", "ibv_get_async_event",
		"ibv_ack_async_event", "ibv_event_type_str", "ibv_query_qp", NULL,
	};
	void *h = dlopen("libibverbs.so", RTLD_NOW | RTLD_LOCAL);
	int n = 0, bad = 0;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	for (const char **s = v11; *s; s++)
		bad |= !sym(h, *s, "IBVERBS_1.1");
	bad |= !sym(h, "ibv_reg_mr_iova2", "IBVERBS_1.8");
	bad |= !sym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	bad |= !sym(h, "ibv_query_ece", "IBVERBS_1.10");
	bad |= !sym(h, "ibv_create_comp_channel", "IBVERBS_1.0");
	bad |= !sym(h, "_ibv_query_gid_ex", "IBVERBS_1.11");
	bad |= !sym(h, "ibv_query_qp_data_in_order", "IBVERBS_1.14");
	if (dlvsym(h, "ibv_get_device_list", "IBVERBS_9.9")) {
		fprintf(stderr, "a version that does not exist resolved\n");
		bad = 1;
	}
	if (bad)
		return 1;
	struct ibv_device **(*get)(int *) = sym(h, "ibv_get_device_list", "IBVERBS_1.1");
	const char *(*name)(struct ibv_device *) =
		sym(h, "ibv_get_device_name", "IBVERBS_1.1");
	void (*put)(struct ibv_device **) = sym(h, "ibv_free_device_list", "IBVERBS_1.1");
	struct ibv_device **list = get(&n);
	if (!list || n < 1 || strcmp(name(list[0]), "metaroce0") != 0) {
		fprintf(stderr, "device list wrong\n");
		return 1;
	}
	put(list);
	printf("dlvsym_check: OK\n");
	return 0;
}
