package io.gospan.receiver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code gospan}: with no subcommand, {@code run}. */
@Command(
    name = "gospan",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = {
      "Traces the gRPC calls of unmodified Go programs with eBPF uprobes and exports the spans over OTLP.",
      "With no command, runs the sidecar (gospan run)."
    },
    subcommands = {RunCommand.class, InspectCommand.class, VersionCommand.class, CommandLine.HelpCommand.class},
    footer = {
      "",
      "Exit codes: 0 ok, 1 runtime error, 2 usage or configuration error, 3 (inspect) no spans possible",
      "(inspect DIR: for some Go gRPC binary under DIR).",
      "run needs root, or CAP_SYS_ADMIN (uprobes) + CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE;",
      "inspect needs only read access to the binary."
    })
public final class GospanCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    return new CommandLine(new RunCommand()).execute();
  }
}
