package io.gospan.receiver.bpf;

/**
 * Test helper run in a child JVM: loads grpc.bpf.o and prints the outcome. Exit 0 loaded,
 * 3 BpfException (message on stdout), 4 anything else.
 */
public final class LoadProbeMain {
  private LoadProbeMain() {}

  public static void main(String[] args) {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o")) {
      obj.load();
      System.out.println("loaded");
      System.exit(0);
    } catch (BpfException e) {
      System.out.println(e.getMessage());
      System.exit(3);
    } catch (Throwable t) {
      t.printStackTrace(System.out);
      System.exit(4);
    }
  }
}
