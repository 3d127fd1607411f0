"""The one syscall policy and its two compiled forms: BPF for bwrap, a JSON profile for Docker."""

from __future__ import annotations

import errno

import pyseccomp

from sandbox.seccomp import (
    DENIED,
    LOCK_COMMANDS,
    NOT_IMPLEMENTED,
    bpf_program,
    docker_profile,
    policy,
)


def test_every_name_is_a_syscall_libseccomp_knows():
    unknown = [rule.syscall for rule in policy()
               if pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, rule.syscall) < 0]
    assert set(unknown) <= {"fcntl64", "stime", "umount", "vm86", "vm86old"}  # 32-bit only


def test_the_lock_family_and_the_named_escapes_are_denied():
    names = {rule.syscall for rule in policy() if not rule.args}
    assert {"flock", "ptrace", "process_vm_readv", "process_vm_writev", "keyctl", "add_key",
            "request_key", "perf_event_open", "bpf", "userfaultfd", "io_uring_setup",
            "io_uring_enter", "io_uring_register", "mount", "umount2", "unshare",
            "setns"} <= names
    fcntl_commands = {rule.args[0][2] for rule in policy() if rule.syscall == "fcntl"}
    assert fcntl_commands == set(LOCK_COMMANDS) >= {5, 6, 7, 36, 37, 38}
    assert all(rule.errno == errno.EPERM for rule in policy() if rule.syscall in DENIED)
    assert {rule.syscall for rule in policy() if rule.errno == errno.ENOSYS} == set(
        NOT_IMPLEMENTED)


def test_bpf_program_is_compiled_once():
    program = bpf_program()
    assert program and len(program) % 8 == 0  # struct sock_filter is 8 bytes
    assert bpf_program() is program


def test_docker_profile_is_the_same_policy():
    profile = docker_profile()
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    rules = profile["syscalls"]
    assert len(rules) == len(policy())
    by_name = {}
    for rule in rules:
        by_name.setdefault(rule["names"][0], []).append(rule)
    assert {r["errnoRet"] for r in by_name["flock"]} == {errno.EPERM}
    assert by_name["clone3"][0]["errnoRet"] == errno.ENOSYS
    fcntl_values = {r["args"][0]["value"] for r in by_name["fcntl"]}
    assert fcntl_values == set(LOCK_COMMANDS)
    assert all(r["args"][0]["index"] == 1 and r["args"][0]["op"] == "SCMP_CMP_EQ"
               for r in by_name["fcntl"])
    clone = by_name["clone"]
    assert all(r["args"][0]["op"] == "SCMP_CMP_MASKED_EQ"
               and r["args"][0]["value"] == r["args"][0]["valueTwo"] for r in clone)
