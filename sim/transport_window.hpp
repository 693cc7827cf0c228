#pragma once
// Bytes a collective library's connection keeps in flight over a link with a long round trip:
// what bounds a transfer's rate to window / RTT (Network::window_rate_cap) on WAN and measured
// pair links, which NCCL crosses with its socket transport (no RDMA between sites).

namespace hetsim {

// One TCP connection's receive window as Linux sizes it by default: net.ipv4.tcp_rmem's maximum
// of 6 MiB (Documentation/networking/ip-sysctl.rst, tcp_rmem "max: 6MB"), of which
// tcp_adv_win_scale = 1 (the default, same file) advertises half as window, the other half
// being bookkeeping overhead: 3 MiB. NCCL leaves SO_RCVBUF/SO_SNDBUF to the kernel's
// autotuning (src/include/socket.h, the setsockopt calls commented out), so this is the most a
// socket reaches.
inline constexpr double kTcpWindowBytes = 3.0 * 1024 * 1024;

// A NCCL socket-transport connection of `sockets` TCP connections (NCCL_SOCKET_NTHREADS x
// NCCL_NSOCKS_PERTHREAD; src/transport/net_socket.cc, ncclSocketGetNsockNthread, picks 1 x 1
// unless the NIC's PCI vendor is AWS's 0x1d0f, 2 x 8 there, and stripes each message over them).
inline double socket_connection_window_bytes(int sockets) { return sockets * kTcpWindowBytes; }

}  // namespace hetsim
