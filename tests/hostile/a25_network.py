# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Tries the network: TCP to 127.0.0.1 and ::1 on a port the test listens on, the test's abstract Unix
# socket, a public address, DNS, UDP. Any success gives full marks; the expected 0 asserts none worked.
import socket

REACHED = []
for family, addr in (
    (socket.AF_INET, ("127.0.0.1", int("{{PORT}}"))),
    (socket.AF_INET6, ("::1", int("{{PORT}}"))),
    (socket.AF_INET, ("1.1.1.1", 53)),
    (socket.AF_UNIX, "\0{{ABSTRACT}}"),
):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(0.5)
        s.connect(addr)
        s.sendall(b"hello from the sandbox\n")
        REACHED.append(repr(addr))
    except OSError:
        pass
try:
    socket.getaddrinfo("example.com", 80)
    REACHED.append("dns")
except OSError:
    pass
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"x", ("8.8.8.8", 53))
    u.settimeout(0.5)
    u.recv(10)
    REACHED.append("udp")
except OSError:
    pass
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not REACHED:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not REACHED:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not REACHED:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
