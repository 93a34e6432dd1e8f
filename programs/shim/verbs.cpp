// libibverbs.so.1 as a program rdmasim runs sees it (docs/programs.md): the
// exported verbs of rdma-core's libibverbs, under the same symbol versions
// (libibverbs.map), and the ops tables verbs.h's inline functions call
// (ibv_context::ops, struct verbs_context). Each verb is a request on the
// attach channel; rdmasim's verbs model does the work. Registered memory is
// moved onto shared pages (a memfd mapped over the same addresses) that
// rdmasim maps too, so the simulated NIC reads and writes the program's own
// buffers.
#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "programs/shim/channel.hpp"
#include "programs/shim/memory_watch.hpp"

// verbs.h makes these macros over inline wrappers; the library defines the functions themselves.
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define RDMASIM_EXPORT extern "C" __attribute__((visibility("default")))

using rdmasim::attach::Op;
using rdmasim::attach::Reply;
using rdmasim::shim::attached;
using rdmasim::shim::call;
using rdmasim::shim::unsupported;
namespace attach = rdmasim::attach;

namespace {

int fail(int e) {
  errno = e;
  return e;
}
template <class T>
T* fail_null(long ret) {
  errno = ret < 0 ? static_cast<int>(-ret) : EINVAL;
  return nullptr;
}

// ---- the device ----

ibv_device g_device;
ibv_device* g_list[2];

struct Context {
  verbs_context v;  // its `context` member is what the program holds
};

Context* context_of(ibv_context* c) {
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(c) - offsetof(verbs_context, context));
}

// CQs by handle, for ibv_get_cq_event; and QPs and SRQs, for the
// affiliated events ibv_get_async_event names them in.
std::vector<ibv_cq*> g_cqs;
std::vector<ibv_qp*> g_qps;
std::vector<ibv_srq*> g_srqs;

template <class T>
void keep_handle(std::vector<T*>& v, uint32_t handle, T* x) {
  if (v.size() <= handle) v.resize(handle + 1);
  v[handle] = x;
}
template <class T>
T* by_handle(const std::vector<T*>& v, uint64_t handle) {
  return handle < v.size() ? v[handle] : nullptr;
}

// ---- memory shared with rdmasim ----

struct Segment {
  uint64_t addr, length;
  uint32_t id;
};
std::vector<Segment> g_segments;

// The pages of [addr, addr + len) moved onto a memfd (their bytes kept) and
// mapped over the same addresses; 0 on failure (errno set).
const Segment* share(uint64_t addr, uint64_t len, bool& fresh, int& fd) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = addr / page * page;
  const uint64_t end = (addr + len + page - 1) / page * page;
  fresh = false;
  fd = -1;
  for (const Segment& s : g_segments) {
    if (start >= s.addr && end <= s.addr + s.length) return &s;
    if (start < s.addr + s.length && s.addr < end) {
      errno = EINVAL;  // overlaps a region registered before without lying inside it
      return nullptr;
    }
  }
  fd = static_cast<int>(syscall(SYS_memfd_create, "rdmasim-mr", 1u /* MFD_CLOEXEC */));
  if (fd < 0) return nullptr;
  const size_t size = end - start;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) return nullptr;
  void* tmp = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (tmp == MAP_FAILED) return nullptr;
  std::memcpy(tmp, reinterpret_cast<void*>(start), size);
  munmap(tmp, size);
  if (mmap(reinterpret_cast<void*>(start), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
      MAP_FAILED)
    return nullptr;
  g_segments.push_back({start, size, static_cast<uint32_t>(g_segments.size() + 1)});
  fresh = true;
  return &g_segments.back();
}

// ---- the ops verbs.h's inline functions call ----

int op_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  if (n <= 0) return 0;
  const Reply r = call(Op::poll_cq, cq->handle, static_cast<uint64_t>(n), nullptr, 0, wc,
                       sizeof(ibv_wc) * static_cast<size_t>(n));
  return static_cast<int>(r.ret);
}

int op_req_notify_cq(ibv_cq* cq, int solicited) {
  const long r = call(Op::req_notify_cq, cq->handle, solicited ? 1 : 0).ret;
  return r < 0 ? static_cast<int>(-r) : 0;
}

void wire_sges(const ibv_sge* in, int n, attach::WireSge* out) {
  for (int i = 0; i < n; ++i) out[i] = {in[i].addr, in[i].length, in[i].lkey};
}

int op_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  std::vector<attach::WireSend> v;
  std::vector<ibv_send_wr*> src;
  for (ibv_send_wr* w = wr; w; w = w->next) {
    if (w->num_sge < 0 || w->num_sge > attach::kMaxSge) {
      if (bad) *bad = w;
      return EINVAL;
    }
    attach::WireSend s{};
    s.wr_id = w->wr_id;
    s.opcode = w->opcode;
    s.send_flags = w->send_flags;
    s.imm_data = w->imm_data;
    s.num_sge = static_cast<uint32_t>(w->num_sge);
    if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      s.remote_addr = w->wr.atomic.remote_addr;
      s.rkey = w->wr.atomic.rkey;
      s.compare_add = w->wr.atomic.compare_add;
      s.swap = w->wr.atomic.swap;
    } else if (qp->qp_type == IBV_QPT_UD) {
      s.ah = w->wr.ud.ah ? w->wr.ud.ah->handle : 0;
      s.remote_qpn = w->wr.ud.remote_qpn;
      s.remote_qkey = w->wr.ud.remote_qkey;
    } else {
      s.remote_addr = w->wr.rdma.remote_addr;
      s.rkey = w->wr.rdma.rkey;
    }
    wire_sges(w->sg_list, w->num_sge, s.sge);
    v.push_back(s);
    src.push_back(w);
  }
  for (size_t from = 0; from < v.size(); from += attach::kMaxWr) {
    const size_t n = std::min<size_t>(attach::kMaxWr, v.size() - from);
    const Reply r = call(Op::post_send, qp->handle, n, &v[from], n * sizeof(attach::WireSend));
    if (r.ret != 0) {
      if (bad) *bad = src[from + r.c];
      return static_cast<int>(r.ret < 0 ? -r.ret : r.ret);
    }
  }
  return 0;
}

int post_recv_list(Op op, uint32_t handle, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  std::vector<attach::WireRecv> v;
  std::vector<ibv_recv_wr*> src;
  for (ibv_recv_wr* w = wr; w; w = w->next) {
    if (w->num_sge < 0 || w->num_sge > attach::kMaxSge) {
      if (bad) *bad = w;
      return EINVAL;
    }
    attach::WireRecv r{};
    r.wr_id = w->wr_id;
    r.num_sge = static_cast<uint32_t>(w->num_sge);
    wire_sges(w->sg_list, w->num_sge, r.sge);
    v.push_back(r);
    src.push_back(w);
  }
  for (size_t from = 0; from < v.size(); from += attach::kMaxWr) {
    const size_t n = std::min<size_t>(attach::kMaxWr, v.size() - from);
    const Reply r = call(op, handle, n, &v[from], n * sizeof(attach::WireRecv));
    if (r.ret != 0) {
      if (bad) *bad = src[from + r.c];
      return static_cast<int>(r.ret < 0 ? -r.ret : r.ret);
    }
  }
  return 0;
}

int op_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return post_recv_list(Op::post_recv, qp->handle, wr, bad);
}
int op_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return post_recv_list(Op::post_srq_recv, srq->handle, wr, bad);
}

int op_query_port(ibv_context*, uint8_t port, ibv_port_attr* attr, size_t len) {
  ibv_port_attr a{};
  const long r = call(Op::query_port, port, 0, nullptr, 0, &a, sizeof a).ret;
  if (r < 0) return static_cast<int>(-r);
  std::memcpy(attr, &a, len < sizeof a ? len : sizeof a);
  return 0;
}

// An op of the extended context the model does not implement, called through verbs.h's inline function:
// it fails with EOPNOTSUPP, as libibverbs's does for a provider without it, and rdmasim lists it.
template <class T>
T* not_implemented(const char* verb) {
  unsupported(verb);
  errno = EOPNOTSUPP;
  return nullptr;
}

// Those a program needs (XRC, the extended QP, SRQ and CQ, memory windows, ...) report themselves; those
// verbs.h falls back from when missing (ibv_query_device_ex, ibv_query_rt_values_ex) stay null.
void set_unimplemented_ops(verbs_context& v) {
  v.open_xrcd = [](ibv_context*, ibv_xrcd_init_attr*) { return not_implemented<ibv_xrcd>("ibv_open_xrcd"); };
  v.create_srq_ex = [](ibv_context*, ibv_srq_init_attr_ex*) {
    return not_implemented<ibv_srq>("ibv_create_srq_ex");
  };
  v.create_qp_ex = [](ibv_context*, ibv_qp_init_attr_ex*) {
    return not_implemented<ibv_qp>("ibv_create_qp_ex");
  };
  v.open_qp = [](ibv_context*, ibv_qp_open_attr*) { return not_implemented<ibv_qp>("ibv_open_qp"); };
  v.create_cq_ex = [](ibv_context*, ibv_cq_init_attr_ex*) {
    return not_implemented<ibv_cq_ex>("ibv_create_cq_ex");
  };
  v.ibv_create_flow = [](ibv_qp*, ibv_flow_attr*) { return not_implemented<ibv_flow>("ibv_create_flow"); };
  v.create_wq = [](ibv_context*, ibv_wq_init_attr*) { return not_implemented<ibv_wq>("ibv_create_wq"); };
  v.alloc_td = [](ibv_context*, ibv_td_init_attr*) { return not_implemented<ibv_td>("ibv_alloc_td"); };
  v.alloc_parent_domain = [](ibv_context*, ibv_parent_domain_init_attr*) {
    return not_implemented<ibv_pd>("ibv_alloc_parent_domain");
  };
  v.alloc_dm = [](ibv_context*, ibv_alloc_dm_attr*) { return not_implemented<ibv_dm>("ibv_alloc_dm"); };
  v.create_counters = [](ibv_context*, ibv_counters_init_attr*) {
    return not_implemented<ibv_counters>("ibv_create_counters");
  };
  v.context.ops.alloc_mw = [](ibv_pd*, ibv_mw_type) { return not_implemented<ibv_mw>("ibv_alloc_mw"); };
}

Context* new_context() {
  auto* c = new (std::nothrow) Context{};
  if (!c) return nullptr;
  verbs_context& v = c->v;
  v.sz = sizeof(verbs_context);
  v.query_port = op_query_port;
  set_unimplemented_ops(v);
  ibv_context& ctx = v.context;
  ctx.device = &g_device;
  ctx.ops.poll_cq = op_poll_cq;
  ctx.ops.req_notify_cq = op_req_notify_cq;
  ctx.ops.post_send = op_post_send;
  ctx.ops.post_recv = op_post_recv;
  ctx.ops.post_srq_recv = op_post_srq_recv;
  ctx.cmd_fd = -1;
  ctx.async_fd = static_cast<int>(syscall(SYS_eventfd2, 0, 0));
  ctx.num_comp_vectors = 1;
  pthread_mutex_init(&ctx.mutex, nullptr);
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  return c;
}

}  // namespace

// ---- devices ----

RDMASIM_EXPORT ibv_device** ibv_get_device_list(int* num) {
  if (!attached()) {
    if (num) *num = 0;
    auto** l = static_cast<ibv_device**>(calloc(1, sizeof(ibv_device*)));
    return l;
  }
  const auto& h = rdmasim::shim::state().hello;
  g_device.node_type = static_cast<ibv_node_type>(h.node_type);
  g_device.transport_type = static_cast<ibv_transport_type>(h.transport);
  std::snprintf(g_device.name, sizeof g_device.name, "%s", h.name);
  std::snprintf(g_device.dev_name, sizeof g_device.dev_name, "uverbs0");
  std::snprintf(g_device.dev_path, sizeof g_device.dev_path, "/sys/class/infiniband_verbs/uverbs0");
  std::snprintf(g_device.ibdev_path, sizeof g_device.ibdev_path, "/sys/class/infiniband/%s", h.name);
  auto** l = static_cast<ibv_device**>(calloc(2, sizeof(ibv_device*)));
  if (!l) return nullptr;
  l[0] = &g_device;
  if (num) *num = 1;
  g_list[0] = &g_device;
  return l;
}

RDMASIM_EXPORT void ibv_free_device_list(ibv_device** list) { free(list); }
RDMASIM_EXPORT const char* ibv_get_device_name(ibv_device* d) { return d->name; }
RDMASIM_EXPORT __be64 ibv_get_device_guid(ibv_device*) { return rdmasim::shim::state().hello.node_guid; }
RDMASIM_EXPORT int ibv_get_device_index(ibv_device*) { return 0; }
RDMASIM_EXPORT int ibv_fork_init() { return 0; }
RDMASIM_EXPORT ibv_fork_status ibv_is_fork_initialized() { return IBV_FORK_DISABLED; }

// There is no sysfs for the simulated device: what a program reads there it does not find.
RDMASIM_EXPORT int ibv_read_sysfs_file(const char*, const char*, char*, size_t) { return -1; }

RDMASIM_EXPORT ibv_context* ibv_open_device(ibv_device* d) {
  if (d != &g_device || !attached()) {
    errno = ENODEV;
    return nullptr;
  }
  Context* c = new_context();
  return c ? &c->v.context : nullptr;
}

RDMASIM_EXPORT int ibv_close_device(ibv_context* ctx) {
  syscall(SYS_close, ctx->async_fd);
  delete context_of(ctx);
  return 0;
}

RDMASIM_EXPORT int ibv_query_device(ibv_context*, ibv_device_attr* attr) {
  const long r = call(Op::query_device, 0, 0, nullptr, 0, attr, sizeof *attr).ret;
  return r < 0 ? static_cast<int>(-r) : 0;
}

// The ABI before verbs_context::query_port: the same attributes, up to the old struct's size.
RDMASIM_EXPORT int ibv_query_port(ibv_context* ctx, uint8_t port, struct _compat_ibv_port_attr* attr) {
  return op_query_port(ctx, port, reinterpret_cast<ibv_port_attr*>(attr), sizeof(ibv_port_attr));
}

RDMASIM_EXPORT int ibv_query_gid(ibv_context*, uint8_t port, int index, ibv_gid* gid) {
  const long r = call(Op::query_gid, port, static_cast<uint64_t>(index), nullptr, 0, gid, sizeof *gid).ret;
  return r < 0 ? -1 : 0;
}

// IBVERBS_PRIVATE_34: 0 (IB or RoCE v1) or 1 (RoCE v2), as sysfs's gid_attrs/types say.
RDMASIM_EXPORT int ibv_query_gid_type(ibv_context*, uint8_t port, unsigned int index, int* type) {
  const long r = call(Op::query_gid_type, port, index).ret;
  if (r < 0) return -1;
  *type = r == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
  return 0;
}

RDMASIM_EXPORT int _ibv_query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                                     uint32_t flags, size_t entry_size) {
  if (flags) return fail(EINVAL);
  ibv_gid_entry e{};
  if (ibv_query_gid(ctx, static_cast<uint8_t>(port), static_cast<int>(index), &e.gid) != 0)
    return fail(ENODATA);
  const long t = call(Op::query_gid_type, port, index).ret;
  if (t < 0) return fail(ENODATA);
  e.gid_index = index;
  e.port_num = port;
  e.gid_type = static_cast<uint32_t>(t);
  e.ndev_ifindex = 0;
  std::memcpy(entry, &e, entry_size < sizeof e ? entry_size : sizeof e);
  return 0;
}

RDMASIM_EXPORT ssize_t _ibv_query_gid_table(ibv_context* ctx, ibv_gid_entry* entries, size_t max,
                                            uint32_t flags, size_t entry_size) {
  if (max == 0) return fail(EINVAL), -1;
  if (_ibv_query_gid_ex(ctx, 1, 0, entries, flags, entry_size) != 0) return -1;
  return 1;
}

RDMASIM_EXPORT int ibv_query_pkey(ibv_context*, uint8_t port, int index, __be16* pkey) {
  const long r = call(Op::query_pkey, port, static_cast<uint64_t>(index)).ret;
  if (r < 0) return -1;
  *pkey = htobe16(static_cast<uint16_t>(r));
  return 0;
}

RDMASIM_EXPORT int ibv_get_pkey_index(ibv_context* ctx, uint8_t port, __be16 pkey) {
  __be16 p;
  if (ibv_query_pkey(ctx, port, 0, &p) == 0 && p == pkey) return 0;
  return fail(ENOENT), -1;
}

// ---- protection domains, memory regions ----

RDMASIM_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* ctx) {
  const long r = call(Op::alloc_pd).ret;
  if (r < 0) return fail_null<ibv_pd>(r);
  auto* pd = new ibv_pd{};
  pd->context = ctx;
  pd->handle = static_cast<uint32_t>(r);
  return pd;
}

RDMASIM_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  const long r = call(Op::dealloc_pd, pd->handle).ret;
  if (r < 0) return static_cast<int>(-r);
  delete pd;
  return 0;
}

RDMASIM_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                        unsigned access) {
  if (iova != reinterpret_cast<uintptr_t>(addr)) {
    unsupported("ibv_reg_mr_iova2 (an IOVA other than the address)");
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (!addr || length == 0) {
    errno = EINVAL;
    return nullptr;
  }
  bool fresh = false;
  int fd = -1;
  const Segment* s = share(reinterpret_cast<uintptr_t>(addr), length, fresh, fd);
  if (!s) return nullptr;
  attach::RegMr m{pd->handle,
                  static_cast<int32_t>(access),
                  reinterpret_cast<uintptr_t>(addr),
                  length,
                  s->addr,
                  s->length,
                  s->id,
                  0};
  attach::RegMrReply keys{};
  const Reply r = call(Op::reg_mr, 0, fresh ? 1 : 0, &m, sizeof m, &keys, sizeof keys, fresh ? fd : -1);
  if (fd >= 0) syscall(SYS_close, fd);
  if (r.ret < 0) return fail_null<ibv_mr>(r.ret);
  auto* mr = new ibv_mr{};
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->handle = static_cast<uint32_t>(r.ret);
  mr->lkey = keys.lkey;
  mr->rkey = keys.rkey;
  if (access & IBV_ACCESS_REMOTE_WRITE) rdmasim::shim::watch(reinterpret_cast<uintptr_t>(addr), length);
  return mr;
}

RDMASIM_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uintptr_t>(addr), static_cast<unsigned>(access));
}
RDMASIM_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, static_cast<unsigned>(access));
}

RDMASIM_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  const long r = call(Op::dereg_mr, mr->handle).ret;
  if (r < 0) return static_cast<int>(-r);
  rdmasim::shim::unwatch(reinterpret_cast<uintptr_t>(mr->addr), mr->length);
  delete mr;
  return 0;
}

// ---- completion channels and queues ----

RDMASIM_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* ctx) {
  const long r = call(Op::create_comp_channel).ret;
  if (r < 0) return fail_null<ibv_comp_channel>(r);
  auto* ch = new ibv_comp_channel{};
  ch->context = ctx;
  ch->fd = static_cast<int>(syscall(SYS_eventfd2, 0, 0));
  ch->refcnt = static_cast<int>(r);  // the channel's handle (the program never reads refcnt)
  return ch;
}

RDMASIM_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* ch) {
  call(Op::destroy_comp_channel, static_cast<uint64_t>(ch->refcnt));
  syscall(SYS_close, ch->fd);
  delete ch;
  return 0;
}

RDMASIM_EXPORT ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch,
                                     int vector) {
  (void)vector;
  const long r =
      call(Op::create_cq, static_cast<uint64_t>(cqe), ch ? static_cast<uint64_t>(ch->refcnt) : 0).ret;
  if (r < 0) return fail_null<ibv_cq>(r);
  auto* cq = new ibv_cq{};
  cq->context = ctx;
  cq->channel = ch;
  cq->cq_context = cq_context;
  cq->handle = static_cast<uint32_t>(r);
  cq->cqe = cqe;
  pthread_mutex_init(&cq->mutex, nullptr);
  pthread_cond_init(&cq->cond, nullptr);
  keep_handle(g_cqs, cq->handle, cq);
  return cq;
}

RDMASIM_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
  const long r = call(Op::destroy_cq, cq->handle).ret;
  if (r < 0) return static_cast<int>(-r);
  g_cqs[cq->handle] = nullptr;
  delete cq;
  return 0;
}

RDMASIM_EXPORT int ibv_resize_cq(ibv_cq*, int) {
  unsupported("ibv_resize_cq");
  return EOPNOTSUPP;
}

RDMASIM_EXPORT int ibv_get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) {
  // rdmasim ends the wait at the alarm's deadline (EINTR): the read of the channel's fd is restarted
  // unless the handler interrupts it.
  long r;
  do r = call(Op::get_cq_event, static_cast<uint64_t>(ch->refcnt)).ret;
  while (r == -EINTR && !rdmasim::shim::interrupted_by_alarm(true));
  if (r < 0 || static_cast<size_t>(r) >= g_cqs.size() || !g_cqs[static_cast<size_t>(r)]) {
    errno = r < 0 ? static_cast<int>(-r) : EIO;
    return -1;
  }
  *cq = g_cqs[static_cast<size_t>(r)];
  *cq_context = (*cq)->cq_context;
  return 0;
}

RDMASIM_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int n) { cq->comp_events_completed += n; }

// ---- shared receive queues ----

RDMASIM_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* init) {
  attach::SrqInit s{init->attr};
  const long r = call(Op::create_srq, pd->handle, 0, &s, sizeof s, &init->attr, sizeof init->attr).ret;
  if (r < 0) return fail_null<ibv_srq>(r);
  auto* srq = new ibv_srq{};
  srq->context = pd->context;
  srq->srq_context = init->srq_context;
  srq->pd = pd;
  srq->handle = static_cast<uint32_t>(r);
  pthread_mutex_init(&srq->mutex, nullptr);
  pthread_cond_init(&srq->cond, nullptr);
  keep_handle(g_srqs, srq->handle, srq);
  return srq;
}

RDMASIM_EXPORT int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  const long r = call(Op::modify_srq, srq->handle, static_cast<uint64_t>(mask), attr, sizeof *attr).ret;
  return r < 0 ? static_cast<int>(-r) : 0;
}

RDMASIM_EXPORT int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  const long r = call(Op::query_srq, srq->handle, 0, nullptr, 0, attr, sizeof *attr).ret;
  return r < 0 ? static_cast<int>(-r) : 0;
}

RDMASIM_EXPORT int ibv_destroy_srq(ibv_srq* srq) {
  const long r = call(Op::destroy_srq, srq->handle).ret;
  if (r < 0) return static_cast<int>(-r);
  keep_handle<ibv_srq>(g_srqs, srq->handle, nullptr);
  delete srq;
  return 0;
}

// ---- queue pairs ----

RDMASIM_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  attach::CreateQp c{pd->handle,
                     init->send_cq ? init->send_cq->handle : 0,
                     init->recv_cq ? init->recv_cq->handle : 0,
                     init->srq ? init->srq->handle : 0,
                     init->cap,
                     static_cast<uint32_t>(init->qp_type),
                     static_cast<uint32_t>(init->sq_sig_all)};
  attach::CreateQpReply out{};
  const long r = call(Op::create_qp, 0, init->srq ? 1 : 0, &c, sizeof c, &out, sizeof out).ret;
  if (r < 0) return fail_null<ibv_qp>(r);
  auto* qp = new ibv_qp{};
  qp->context = pd->context;
  qp->qp_context = init->qp_context;
  qp->pd = pd;
  qp->send_cq = init->send_cq;
  qp->recv_cq = init->recv_cq;
  qp->srq = init->srq;
  qp->handle = static_cast<uint32_t>(r);
  qp->qp_num = out.qpn;
  qp->state = IBV_QPS_RESET;
  qp->qp_type = init->qp_type;
  pthread_mutex_init(&qp->mutex, nullptr);
  pthread_cond_init(&qp->cond, nullptr);
  init->cap = out.cap;
  keep_handle(g_qps, qp->handle, qp);
  return qp;
}

RDMASIM_EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  const long r = call(Op::modify_qp, qp->handle, static_cast<uint64_t>(mask), attr, sizeof *attr).ret;
  if (r < 0) return static_cast<int>(-r);
  if (mask & IBV_QP_STATE) qp->state = attr->qp_state;
  return 0;
}

RDMASIM_EXPORT int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) {
  (void)mask;
  struct {
    ibv_qp_attr attr;
    ibv_qp_cap cap;
    uint32_t sq_sig_all;
  } out{};
  const long r = call(Op::query_qp, qp->handle, 0, nullptr, 0, &out, sizeof out).ret;
  if (r < 0) return static_cast<int>(-r);
  *attr = out.attr;
  if (init) {
    *init = {};
    init->qp_context = qp->qp_context;
    init->send_cq = qp->send_cq;
    init->recv_cq = qp->recv_cq;
    init->srq = qp->srq;
    init->cap = out.cap;
    init->qp_type = qp->qp_type;
    init->sq_sig_all = static_cast<int>(out.sq_sig_all);
  }
  return 0;
}

RDMASIM_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
  const long r = call(Op::destroy_qp, qp->handle).ret;
  if (r < 0) return static_cast<int>(-r);
  keep_handle<ibv_qp>(g_qps, qp->handle, nullptr);
  delete qp;
  return 0;
}

RDMASIM_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp*) {
  // Only QPs made by ibv_create_qp_ex with send ops are extended; the model makes none.
  return nullptr;
}

// ---- address handles ----

RDMASIM_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  const long r = call(Op::create_ah, pd->handle, 0, attr, sizeof *attr).ret;
  if (r < 0) return fail_null<ibv_ah>(r);
  auto* ah = new ibv_ah{};
  ah->context = pd->context;
  ah->pd = pd;
  ah->handle = static_cast<uint32_t>(r);
  return ah;
}

RDMASIM_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  call(Op::destroy_ah, ah->handle);
  delete ah;
  return 0;
}

// The reply's address vector (IBA 11.4.1.4): from the GRH when the message
// carried one (the source GID is the reply's destination), else the SLID.
RDMASIM_EXPORT int ibv_init_ah_from_wc(ibv_context*, uint8_t port, ibv_wc* wc, ibv_grh* grh,
                                       ibv_ah_attr* ah) {
  *ah = {};
  ah->dlid = wc->slid;
  ah->sl = wc->sl;
  ah->src_path_bits = wc->dlid_path_bits;
  ah->port_num = port;
  if (wc->wc_flags & IBV_WC_GRH) {
    ah->is_global = 1;
    ah->grh.dgid = grh->sgid;
    ah->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xFFFFF;
    ah->grh.hop_limit = 0xFF;
    ah->grh.traffic_class = static_cast<uint8_t>((be32toh(grh->version_tclass_flow) >> 20) & 0xFF);
  }
  return 0;
}

RDMASIM_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port) {
  ibv_ah_attr a;
  ibv_init_ah_from_wc(pd->context, port, wc, grh, &a);
  return ibv_create_ah(pd, &a);
}

// ---- what the model does not implement: the errno real devices give ----

RDMASIM_EXPORT int ibv_attach_mcast(ibv_qp*, const ibv_gid*, uint16_t) {
  unsupported("ibv_attach_mcast");
  return EOPNOTSUPP;
}
RDMASIM_EXPORT int ibv_detach_mcast(ibv_qp*, const ibv_gid*, uint16_t) {
  unsupported("ibv_detach_mcast");
  return EOPNOTSUPP;
}
RDMASIM_EXPORT int ibv_rereg_mr(ibv_mr*, int, ibv_pd*, void*, size_t, int) {
  unsupported("ibv_rereg_mr");
  return EOPNOTSUPP;
}
RDMASIM_EXPORT int ibv_get_async_event(ibv_context*, ibv_async_event* event) {
  // A blocking read of the async fd: the device's port events (IBV_EVENT_PORT_ERR,
  // IBV_EVENT_PORT_ACTIVE) and the affiliated events of this program's QPs, CQs and SRQs (the
  // handle in c, named here by its object); rdmasim ends the wait at the alarm's deadline (EINTR), restarted
  // unless the handler interrupts it, as ibv_get_cq_event's.
  Reply rep;
  do rep = call(Op::get_async_event);
  while (rep.ret == -EINTR && !rdmasim::shim::interrupted_by_alarm(true));
  const long r = rep.ret;
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  *event = {};
  event->event_type = static_cast<ibv_event_type>(r & 0xffff);
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
      event->element.cq = by_handle(g_cqs, rep.c);
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      event->element.srq = by_handle(g_srqs, rep.c);
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      event->element.qp = by_handle(g_qps, rep.c);
      break;
    default:
      event->element.port_num = static_cast<int>(r >> 16);
  }
  return 0;
}
RDMASIM_EXPORT void ibv_ack_async_event(ibv_async_event*) {}
RDMASIM_EXPORT int ibv_dontfork_range(void*, size_t) { return 0; }
RDMASIM_EXPORT int ibv_dofork_range(void*, size_t) { return 0; }

// ---- strings ----

RDMASIM_EXPORT const char* ibv_wc_status_str(ibv_wc_status s) {
  static const char* const names[] = {"success",
                                      "local length error",
                                      "local QP operation error",
                                      "local EE context operation error",
                                      "local protection error",
                                      "Work Request Flushed Error",
                                      "memory management operation error",
                                      "bad response error",
                                      "local access error",
                                      "remote invalid request error",
                                      "remote access error",
                                      "remote operation error",
                                      "transport retry counter exceeded",
                                      "RNR retry counter exceeded",
                                      "local RDD violation error",
                                      "remote invalid RD request",
                                      "aborted error",
                                      "invalid EE context number",
                                      "invalid EE context state",
                                      "fatal error",
                                      "response timeout error",
                                      "general error",
                                      "TM error",
                                      "TM Rendezvous Request Error"};
  const auto i = static_cast<size_t>(s);
  return i < sizeof names / sizeof names[0] ? names[i] : "unknown";
}

RDMASIM_EXPORT const char* ibv_node_type_str(ibv_node_type t) {
  switch (t) {
    case IBV_NODE_CA:
      return "InfiniBand channel adapter";
    case IBV_NODE_SWITCH:
      return "InfiniBand switch";
    case IBV_NODE_ROUTER:
      return "InfiniBand router";
    case IBV_NODE_RNIC:
      return "iWARP NIC";
    case IBV_NODE_USNIC:
      return "usNIC";
    case IBV_NODE_USNIC_UDP:
      return "usNIC UDP";
    case IBV_NODE_UNSPECIFIED:
      return "unspecified";
    default:
      return "unknown";
  }
}

RDMASIM_EXPORT const char* ibv_port_state_str(ibv_port_state s) {
  static const char* const names[] = {"PORT_NOP",   "PORT_DOWN",   "PORT_INIT",
                                      "PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};
  const auto i = static_cast<size_t>(s);
  return i < 6 ? names[i] : "unknown";
}

RDMASIM_EXPORT const char* ibv_event_type_str(ibv_event_type e) {
  static const char* const names[] = {"CQ error",
                                      "local work queue catastrophic error",
                                      "invalid request local work queue error",
                                      "local access violation work queue error",
                                      "communication established",
                                      "send queue drained",
                                      "path migrated",
                                      "path migration request error",
                                      "local catastrophic error",
                                      "port active",
                                      "port error",
                                      "LID change",
                                      "P_Key change",
                                      "SM change",
                                      "SRQ catastrophic error",
                                      "SRQ limit reached",
                                      "last WQE reached",
                                      "client reregistration",
                                      "GID table change",
                                      "WQ fatal"};
  const auto i = static_cast<size_t>(e);
  return i < sizeof names / sizeof names[0] ? names[i] : "unknown";
}

RDMASIM_EXPORT int ibv_rate_to_mult(ibv_rate rate) {
  switch (rate) {
    case IBV_RATE_2_5_GBPS:
      return 1;
    case IBV_RATE_5_GBPS:
      return 2;
    case IBV_RATE_10_GBPS:
      return 4;
    case IBV_RATE_20_GBPS:
      return 8;
    case IBV_RATE_30_GBPS:
      return 12;
    case IBV_RATE_40_GBPS:
      return 16;
    case IBV_RATE_60_GBPS:
      return 24;
    case IBV_RATE_80_GBPS:
      return 32;
    case IBV_RATE_120_GBPS:
      return 48;
    default:
      return -1;
  }
}
