package io.gospan.receiver.discovery;

import static io.gospan.receiver.discovery.ProcessSelector.Verdict.AWAIT_PORT;
import static io.gospan.receiver.discovery.ProcessSelector.Verdict.IGNORE;
import static io.gospan.receiver.discovery.ProcessSelector.Verdict.NEEDS_PROCESS;
import static io.gospan.receiver.discovery.ProcessSelector.Verdict.TRACE;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.discovery.ProcessSelector.Rule;
import io.gospan.receiver.probe.ExeKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What selectors say of a process, on a fake procfs: rules, exclusions, and a port not listened on yet. */
class ProcessSelectorTest {

  @TempDir Path proc;

  private ProcessEntry api;

  /** Process 10 runs /srv/bin/api (deleted: its image was replaced) and listens on 50051 only. */
  @BeforeEach
  void api() throws Exception {
    Path dir = proc.resolve("10");
    Files.createDirectories(dir.resolve("ns"));
    Files.createDirectories(dir.resolve("fd"));
    Files.createDirectories(dir.resolve("net"));
    Files.createSymbolicLink(dir.resolve("ns/net"), Path.of("net:[1]"));
    Files.createSymbolicLink(dir.resolve("fd/3"), Path.of("socket:[7001]"));
    Files.writeString(dir.resolve("net/tcp"), PortLookupTest.TCP_HEADER + PortLookupTest.LISTEN_50051);
    Files.writeString(dir.resolve("cgroup"), "0::/kubepods/pod1/cri-containerd-abc123.scope\n");
    api = new ProcessEntry(10, dir.resolve("exe"), "/srv/bin/api (deleted)", new ExeKey(1, 2), "api");
  }

  ProcessSelector.Verdict judge(List<Rule> include, List<Rule> exclude) {
    ProcFs procFs = new ProcFs(proc);
    return new ProcessSelector(include, exclude).judge(api, procFs, new PortLookup(procFs));
  }

  @Test
  void everyCriterionOfARuleMustHold() throws Exception {
    assertThat(judge(List.of(), List.of())).as("no rules: everything").isEqualTo(TRACE);
    assertThat(judge(List.of(new Rule("/srv/bin/*", null, null, null)), List.of())).isEqualTo(TRACE);
    assertThat(judge(List.of(new Rule("/usr/bin/*", null, null, null)), List.of())).isEqualTo(IGNORE);
    assertThat(judge(List.of(new Rule(null, "ap.", 50051, "abc123")), List.of())).isEqualTo(TRACE);
    assertThat(judge(List.of(new Rule(null, "api", null, "def456")), List.of())).isEqualTo(IGNORE);
    assertThat(judge(List.of(new Rule(null, "pi", null, null)), List.of())).as("the whole name").isEqualTo(IGNORE);
  }

  @Test
  void aPortNotListenedOnYetMakesTheProcessWaitUnlessAnotherRuleOrAnExclusionDecides() throws Exception {
    assertThat(judge(List.of(new Rule(null, null, 8080, null)), List.of())).isEqualTo(AWAIT_PORT);
    assertThat(judge(List.of(new Rule("/usr/bin/*", null, 8080, null)), List.of()))
        .as("another criterion fails: waiting would not help").isEqualTo(IGNORE);
    assertThat(judge(List.of(new Rule(null, null, 8080, null), new Rule(null, "api", null, null)), List.of()))
        .as("another rule holds").isEqualTo(TRACE);
    assertThat(judge(List.of(new Rule(null, null, 8080, null)), List.of(new Rule(null, "api", null, null))))
        .as("excluded").isEqualTo(IGNORE);
    assertThat(judge(List.of(new Rule(null, "api", null, null)), List.of(new Rule(null, null, 8080, null))))
        .as("an exclusion's port counts while it is listened on").isEqualTo(TRACE);
    assertThat(judge(List.of(new Rule(null, "api", null, null)), List.of(new Rule(null, null, 50051, null))))
        .isEqualTo(IGNORE);
  }

  /** A process known only by its exec notice (gone): its path and name are judged, the rest needs the process. */
  @Test
  void aProcessKnownOnlyByItsExecutablesPathIsJudgedByPathAndName() {
    Path ctl = Path.of("/usr/bin/etcdctl");
    assertThat(new ProcessSelector(List.of(), List.of()).judgeExecutable(ctl)).isEqualTo(TRACE);
    assertThat(new ProcessSelector(List.of(new Rule("/usr/bin/etcd*", null, null, null)), List.of()).judgeExecutable(ctl))
        .isEqualTo(TRACE);
    assertThat(new ProcessSelector(List.of(new Rule(null, "ctr", null, null)), List.of()).judgeExecutable(ctl))
        .isEqualTo(IGNORE);
    assertThat(new ProcessSelector(List.of(new Rule(null, "etcdctl", null, "abc123")), List.of()).judgeExecutable(ctl))
        .as("a container id needs the process").isEqualTo(NEEDS_PROCESS);
    assertThat(new ProcessSelector(List.of(new Rule(null, "etcdctl", 2379, null)), List.of()).judgeExecutable(ctl))
        .as("so does a port").isEqualTo(NEEDS_PROCESS);
    assertThat(new ProcessSelector(List.of(new Rule(null, "etcdctl", 2379, null), new Rule("/usr/*/*", null, null, null)),
        List.of()).judgeExecutable(ctl)).as("unless another rule holds on the path alone").isEqualTo(TRACE);
    assertThat(new ProcessSelector(List.of(), List.of(new Rule(null, "etcdctl", null, null))).judgeExecutable(ctl))
        .isEqualTo(IGNORE);
    assertThat(new ProcessSelector(List.of(), List.of(new Rule(null, "etcdctl", null, "abc123"))).judgeExecutable(ctl))
        .as("an exclusion that may hold").isEqualTo(NEEDS_PROCESS);
    assertThat(new ProcessSelector(List.of(), List.of(new Rule(null, "etcdctl", 2379, null))).judgeExecutable(ctl))
        .as("a process that is gone listens on nothing: an exclusion by port does not hold").isEqualTo(TRACE);
  }
}
