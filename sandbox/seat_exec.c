/* seat-exec: the first moments of a confined seat, in the process that becomes its bwrap.
 *
 *   seat-exec STATUS_FD CGROUP_FDS NETNS_FD MNTNS_FD UID RLIMITS PARENT PROGRAM ARGV0 [ARGS...]
 *
 * In this order, as the Python preexec function it replaces did: write "0" to each cgroup.procs
 * descriptor of CGROUP_FDS (comma-separated, or "-": join the seat's cgroups while privileged),
 * join the network namespace of NETNS_FD (or "-": stay; see sandbox/netns.py), join the mount
 * namespace of MNTNS_FD (or "-": stay; see sandbox/mountns.py), drop every group and become UID
 * (or "-": stay), set each RLIMITS entry ("RESOURCE=VALUE,...",
 * soft and hard, or "-"), ask for SIGKILL when the parent dies (and fail if the parent is no
 * longer PARENT, the worker's pid: it died before that was asked), then exec PROGRAM with ARGV0
 * ARGS. Any failure is written to STATUS_FD (close-on-exec, so the parent reads end of file
 * when the exec succeeds) and ends the process with 127. Being a program of its own lets the
 * worker start it with vfork, not by copying its whole address space with fork.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

static int status_fd = -1;

static void fail(const char *what)
{
    char message[512];
    int saved = errno;
    int n = snprintf(message, sizeof message, "seat-exec: %s: %s", what, strerror(saved));
    if (status_fd >= 0 && n > 0)
        (void)!write(status_fd, message, (size_t)n);
    _exit(127);
}

static long number(char **cursor, const char *what)
{
    char *end;
    errno = 0;
    long long value = strtoll(*cursor, &end, 10);
    if (end == *cursor || errno != 0 || value < 0) {
        errno = EINVAL;
        fail(what);
    }
    *cursor = end;
    return (long)value;
}

/* Join the namespace of type TYPE whose descriptor ARG names (or "-": stay). */
static void join(char *arg, int type, const char *failure)
{
    if (strcmp(arg, "-") == 0)
        return;
    int fd = (int)number(&arg, "namespace descriptor");
    if (setns(fd, type) != 0)
        fail(failure);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 10)
        return 127;
    char *cursor = argv[1];
    status_fd = (int)number(&cursor, "status descriptor");
    if (fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0)
        fail("status descriptor");

    if (strcmp(argv[2], "-") != 0) {
        for (cursor = argv[2]; *cursor;) {
            int fd = (int)number(&cursor, "cgroup descriptor");
            if (write(fd, "0", 1) != 1)
                fail("cannot join the seat's cgroup");
            close(fd);
            if (*cursor == ',')
                cursor++;
        }
    }
    join(argv[3], CLONE_NEWNET, "cannot join the shared network namespace");
    join(argv[4], CLONE_NEWNS, "cannot join the lean mount namespace");
    if (strcmp(argv[5], "-") != 0) {
        cursor = argv[5];
        uid_t uid = (uid_t)number(&cursor, "uid");
        if (setgroups(0, NULL) != 0)
            fail("setgroups");
        if (setresgid(uid, uid, uid) != 0)
            fail("setresgid");
        if (setresuid(uid, uid, uid) != 0)
            fail("setresuid");
    }
    if (strcmp(argv[6], "-") != 0) {
        for (cursor = argv[6]; *cursor;) {
            int resource = (int)number(&cursor, "rlimit");
            if (*cursor++ != '=') {
                errno = EINVAL;
                fail("rlimit");
            }
            rlim_t value = (rlim_t)number(&cursor, "rlimit value");
            struct rlimit limit = {value, value};
            if (setrlimit(resource, &limit) != 0)
                fail("setrlimit");
            if (*cursor == ',')
                cursor++;
        }
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        fail("prctl(PR_SET_PDEATHSIG)");
    cursor = argv[7];  /* the parent's pid: not 1, which the worker may be in a container */
    if (getppid() != (pid_t)number(&cursor, "parent pid")) {
        errno = ESRCH;  /* the parent died before the death signal was armed */
        fail("parent gone");
    }
    execv(argv[8], argv + 9);
    fail("exec");
    return 127;
}
