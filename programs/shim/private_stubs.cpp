// The rest of libibverbs.so.1's interface that the libraries perftest loads
// beside it reference (librdmacm, and the mlx5 and efa providers it links
// for their direct verbs): the provider interface (IBVERBS_PRIVATE_34:
// ibv_cmd_*, verbs_*) and a few old helpers. The dynamic linker needs them
// to exist; no call reaches them while the device is rdmasim's (a provider
// only runs for its own hardware, librdmacm only for RDMA CM, which the
// model does not implement). One that is called anyway fails as an
// unsupported verb (docs/programs.md), except the registration a provider
// makes when it loads, which does nothing.
//
// The arguments are never read, so a stub that verbs.h does not declare is
// declared with none.
#include <cerrno>

#include "programs/shim/channel.hpp"

#define RDMASIM_EXPORT extern "C" __attribute__((visibility("default")))

// int-returning calls: the error number, as the ibv_cmd_* functions return it.
#define RDMASIM_INT_STUB(name)         \
  RDMASIM_EXPORT int name() {          \
    rdmasim::shim::unsupported(#name); \
    errno = EOPNOTSUPP;                \
    return EOPNOTSUPP;                 \
  }
// pointer-returning calls: NULL with errno.
#define RDMASIM_PTR_STUB(name)         \
  RDMASIM_EXPORT void* name() {        \
    rdmasim::shim::unsupported(#name); \
    errno = EOPNOTSUPP;                \
    return nullptr;                    \
  }
#define RDMASIM_VOID_STUB(name) \
  RDMASIM_EXPORT void name() { rdmasim::shim::unsupported(#name); }

// What a provider does when it loads: nothing to register with.
RDMASIM_EXPORT void verbs_register_driver_34() {}
RDMASIM_EXPORT void __verbs_log() {}

RDMASIM_VOID_STUB(ibv_copy_ah_attr_from_kern)
RDMASIM_VOID_STUB(ibv_copy_qp_attr_from_kern)
RDMASIM_VOID_STUB(ibv_copy_path_rec_from_kern)
RDMASIM_VOID_STUB(verbs_uninit_context)
RDMASIM_VOID_STUB(verbs_set_ops)
RDMASIM_VOID_STUB(verbs_init_cq)
RDMASIM_INT_STUB(verbs_allow_disassociate_destroy)
// librdmacm's first call (ucma_init finds the rdma_cm ABI under sysfs):
// named for what it is, RDMA CM, so the run's summary says which feature is
// missing; librdmacm then fails as on a host without rdma_ucm.
RDMASIM_EXPORT const char* ibv_get_sysfs_path() {
  rdmasim::shim::unsupported("RDMA CM (librdmacm: perftest -R, rping)");
  errno = ENOSYS;
  return nullptr;
}
RDMASIM_PTR_STUB(_verbs_init_and_alloc_context)
RDMASIM_PTR_STUB(verbs_open_device)
RDMASIM_EXPORT int ibv_set_ece(ibv_qp*, ibv_ece*) {
  rdmasim::shim::unsupported("ibv_set_ece");
  return EOPNOTSUPP;
}
RDMASIM_EXPORT int ibv_query_ece(ibv_qp*, ibv_ece*) {
  rdmasim::shim::unsupported("ibv_query_ece");
  return EOPNOTSUPP;
}
RDMASIM_EXPORT int ibv_resolve_eth_l2_from_gid(ibv_context*, ibv_ah_attr*, uint8_t*, uint16_t*) {
  rdmasim::shim::unsupported("ibv_resolve_eth_l2_from_gid");
  return EOPNOTSUPP;
}
RDMASIM_INT_STUB(execute_ioctl)
RDMASIM_INT_STUB(ibv_cmd_advise_mr)
RDMASIM_INT_STUB(ibv_cmd_alloc_dm)
RDMASIM_INT_STUB(ibv_cmd_alloc_mw)
RDMASIM_INT_STUB(ibv_cmd_alloc_pd)
RDMASIM_INT_STUB(ibv_cmd_attach_mcast)
RDMASIM_INT_STUB(ibv_cmd_close_xrcd)
RDMASIM_INT_STUB(ibv_cmd_create_ah)
RDMASIM_INT_STUB(ibv_cmd_create_counters)
RDMASIM_INT_STUB(ibv_cmd_create_cq_ex)
RDMASIM_INT_STUB(ibv_cmd_create_flow)
RDMASIM_INT_STUB(ibv_cmd_create_flow_action_esp)
RDMASIM_INT_STUB(ibv_cmd_create_qp_ex)
RDMASIM_INT_STUB(ibv_cmd_create_qp_ex2)
RDMASIM_INT_STUB(ibv_cmd_create_rwq_ind_table)
RDMASIM_INT_STUB(ibv_cmd_create_srq)
RDMASIM_INT_STUB(ibv_cmd_create_srq_ex)
RDMASIM_INT_STUB(ibv_cmd_create_wq)
RDMASIM_INT_STUB(ibv_cmd_dealloc_mw)
RDMASIM_INT_STUB(ibv_cmd_dealloc_pd)
RDMASIM_INT_STUB(ibv_cmd_dereg_mr)
RDMASIM_INT_STUB(ibv_cmd_destroy_ah)
RDMASIM_INT_STUB(ibv_cmd_destroy_counters)
RDMASIM_INT_STUB(ibv_cmd_destroy_cq)
RDMASIM_INT_STUB(ibv_cmd_destroy_flow)
RDMASIM_INT_STUB(ibv_cmd_destroy_flow_action)
RDMASIM_INT_STUB(ibv_cmd_destroy_qp)
RDMASIM_INT_STUB(ibv_cmd_destroy_rwq_ind_table)
RDMASIM_INT_STUB(ibv_cmd_destroy_srq)
RDMASIM_INT_STUB(ibv_cmd_destroy_wq)
RDMASIM_INT_STUB(ibv_cmd_detach_mcast)
RDMASIM_INT_STUB(ibv_cmd_free_dm)
RDMASIM_INT_STUB(ibv_cmd_get_context)
RDMASIM_INT_STUB(ibv_cmd_modify_cq)
RDMASIM_INT_STUB(ibv_cmd_modify_flow_action_esp)
RDMASIM_INT_STUB(ibv_cmd_modify_qp)
RDMASIM_INT_STUB(ibv_cmd_modify_qp_ex)
RDMASIM_INT_STUB(ibv_cmd_modify_srq)
RDMASIM_INT_STUB(ibv_cmd_modify_wq)
RDMASIM_INT_STUB(ibv_cmd_open_qp)
RDMASIM_INT_STUB(ibv_cmd_open_xrcd)
RDMASIM_INT_STUB(ibv_cmd_query_context)
RDMASIM_INT_STUB(ibv_cmd_query_device_any)
RDMASIM_INT_STUB(ibv_cmd_query_mr)
RDMASIM_INT_STUB(ibv_cmd_query_port)
RDMASIM_INT_STUB(ibv_cmd_query_qp)
RDMASIM_INT_STUB(ibv_cmd_query_srq)
RDMASIM_INT_STUB(ibv_cmd_read_counters)
RDMASIM_INT_STUB(ibv_cmd_reg_dm_mr)
RDMASIM_INT_STUB(ibv_cmd_reg_dmabuf_mr)
RDMASIM_INT_STUB(ibv_cmd_reg_mr)
RDMASIM_INT_STUB(ibv_cmd_rereg_mr)
RDMASIM_INT_STUB(ibv_cmd_resize_cq)
