/* rollbox launcher: puts itself into a sandbox's cgroups, drops to the sandbox's user, execs bwrap.
 *
 *   rollbox-launch [--wait-fd FD] [--cgroup FILE]... [--user UID:GID] -- COMMAND ARG...
 *
 * With --wait-fd it first waits for one byte on FD (the host makes the cgroups meanwhile; EOF
 * instead of the byte means the host gave up: exit 125 without a word). Each FILE is a cgroup's `tasks` (v1) or `cgroup.procs` (v2) file; the launcher writes "0" to it,
 * which moves the writer itself. A process that moves itself (rather than being moved by pid, as
 * the host did before) skips the kernel's global threadgroup lock, whose first writer after an
 * idle moment waits for an RCU grace period (up to ~13 ms on a cgroup v1 host). Everything the
 * command starts is then born in the cgroups: bubblewrap, and the sandbox's agent. --user switches
 * to UID:GID with GID as the only group (as `chroot --userspec=UID:GID --groups=GID /` did).
 * Any failure exits 125 with a message on stderr, before the command runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what, const char *arg) {
    fprintf(stderr, "rollbox-launch: %s %s: %s\n", what, arg, strerror(errno));
    exit(125);
}

static void enter(const char *file) {
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open", file);
    if (write(fd, "0", 1) != 1) fail("cannot enter the cgroup of", file);
    close(fd);
}

static void become(const char *spec) {
    char *end;
    errno = 0;
    unsigned long uid = strtoul(spec, &end, 10);
    if (errno || *end != ':') {
        errno = EINVAL;
        fail("bad --user", spec);
    }
    unsigned long gid = strtoul(end + 1, &end, 10);
    if (errno || *end != '\0') {
        errno = EINVAL;
        fail("bad --user", spec);
    }
    gid_t groups[1] = {(gid_t)gid};
    if (setgroups(1, groups) != 0) fail("cannot set the groups of", spec);
    if (setgid((gid_t)gid) != 0) fail("cannot set the group of", spec);
    if (setuid((uid_t)uid) != 0) fail("cannot become", spec);
}

static void wait_for(const char *fd_s) {
    char *end, b;
    long fd = strtol(fd_s, &end, 10);
    if (*end != '\0' || fd < 0) {
        errno = EINVAL;
        fail("bad --wait-fd", fd_s);
    }
    ssize_t n;
    do {
        n = read((int)fd, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) exit(125);
    close((int)fd);
}

int main(int argc, char **argv) {
    const char *user = NULL, *wait_fd = NULL;
    const char **cgroups = calloc((size_t)argc, sizeof *cgroups);
    int i = 1, n_cgroups = 0;
    if (cgroups == NULL) fail("out of memory", "");
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--wait-fd") == 0 && i + 1 < argc) {
            wait_fd = argv[++i];
        } else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc) {
            cgroups[n_cgroups++] = argv[++i];
        } else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
            user = argv[++i];
        } else {
            errno = EINVAL;
            fail("unknown argument", argv[i]);
        }
    }
    if (i >= argc) {
        errno = EINVAL;
        fail("no command after", "--");
    }
    /* in this order, whatever the order of the options: the gate, the cgroups, the user */
    if (wait_fd != NULL) wait_for(wait_fd);
    for (int k = 0; k < n_cgroups; k++) enter(cgroups[k]);
    if (user != NULL) become(user);
    execvp(argv[i], argv + i);
    fail("cannot run", argv[i]);
}
