package io.gospan.receiver.span;

import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.resources.Resource;
import java.util.HashMap;
import java.util.Map;

/** service.name = svc-&lt;pid&gt;. */
public final class FakeMetadata implements ProcessMetadata {
  private final Map<Integer, Resource> resources = new HashMap<>();

  @Override
  public void register(ProcessInfo info) {}

  @Override
  public synchronized Resource resource(int pid) {
    return resources.computeIfAbsent(
        pid,
        p -> Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), "svc-" + p, AttributeKey.longKey("process.pid"), (long) p)));
  }

  @Override
  public synchronized void forget(int pid) {
    resources.remove(pid);
  }

  @Override
  public synchronized int size() {
    return resources.size();
  }
}
