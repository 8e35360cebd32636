package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link RecentEnds} against the structure it replaces: a {@link LinkedHashMap} in insertion order,
 * a key put again moved to the newest place, the eldest dropped beyond the bound. Random operations
 * on few keys (so keys repeat and probe chains collide), with every bound from 1 to past the
 * initial ring, compared after each step: size, the oldest entry, and a lookup of every key.
 */
class RecentEndsTest {
  record Key(long a, long b, Object ref) {}

  /** A key reference equal by its number only, all of one hash code: every key of one (a, b) hashes alike. */
  record Collider(int n) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Collider c && c.n == n;
    }

    @Override
    public int hashCode() {
      return 7;
    }
  }

  record Value(long start, long end, long keepUntil, long traceHigh, long traceLow, long span, boolean sampled, Object node) {}

  @Test
  void behavesAsAnInsertionOrderedMapBoundedAtItsEntries() {
    for (int max : new int[] {1, 2, 3, 7, 64, 255, 256, 257, 600, 1000}) {
      compare(max, Math.max(4, max * 3 / 2), RecentEndsTest::key);
    }
  }

  /**
   * Keys of one full hash (so one tag in the index): the index tells them apart by their slots'
   * keys only; and keys whose hashes share the index entry's tag bits but not all bits.
   */
  @Test
  void keysWhoseHashesCollideStayApart() {
    for (int max : new int[] {1, 3, 64, 300}) {
      compare(max, Math.max(4, max * 3 / 2), k -> new Key(5, 9, new Collider(k)));
      compare(max, Math.max(4, max * 3 / 2), k -> new Key(5, 9, k % 3 == 0 ? null : new Collider(k % 5)));
    }
    // 64 keys whose hashes agree in their low 20 bits (the tag and home bits of a 2^11-slot table), not in all
    List<Key> alike = new ArrayList<>();
    for (long a = 0; alike.size() < 64; a++) {
      Key k = new Key(a, 3, null);
      if ((RecentEnds.hash(a, 3, 0) & 0xFFFFF) == (RecentEnds.hash(0, 3, 0) & 0xFFFFF)) {
        alike.add(k);
      }
    }
    assertThat(alike.stream().map(k -> RecentEnds.hash(k.a(), 3, 0)).distinct()).hasSize(64);
    for (int max : new int[] {2, 16, 2048}) {
      compare(max, alike.size(), alike::get);
    }
  }

  /**
   * Above 2^15 slots an index entry's tag no longer holds its home position: the backward shift
   * reads the hash column instead; the same behaviour.
   */
  @Test
  void behavesAlikeWhereTheTagDoesNotHoldTheHome() {
    compare(40_000, 60_000, RecentEndsTest::key);
    compare(40_000, 200, k -> new Key(5, 9, new Collider(k)));
  }

  private static void compare(int max, int keys, IntFunction<Key> keyOf) {
    Random r = new Random(max * 31L + keys);
    RecentEnds t = new RecentEnds(max);
    LinkedHashMap<Key, Value> model = new LinkedHashMap<>();
    for (int step = 0; step < 20_000; step++) {
      int op = r.nextInt(10);
      if (op < 7) {
        Key k = keyOf.apply(r.nextInt(keys));
        Value v = new Value(r.nextLong(), r.nextLong(), step, r.nextLong(), r.nextLong(), r.nextLong(), r.nextBoolean(),
            r.nextBoolean() ? "node" + step : null);
        t.put(k.a(), k.b(), k.ref(), v.start(), v.end(), v.keepUntil(), v.node(), null, v.traceHigh(), v.traceLow(), v.span(),
            v.sampled());
        model.remove(k);
        while (model.size() >= max) {
          Iterator<Key> it = model.keySet().iterator();
          it.next();
          it.remove();
        }
        model.put(k, v);
      } else if (op < 9) {
        t.removeOldest();
        if (!model.isEmpty()) {
          Iterator<Key> it = model.keySet().iterator();
          it.next();
          it.remove();
        }
      } else if (r.nextInt(200) == 0) {
        t.clear();
        model.clear();
      }
      check(t, model, keys, keyOf, max, step);
    }
  }

  @Test
  void keepsNoReferenceToAReplacedOrRemovedEntrysObjects() throws InterruptedException {
    RecentEnds t = new RecentEnds(4);
    Object replaced = new Object();
    Object removed = new Object();
    java.lang.ref.WeakReference<Object> replacedRef = new java.lang.ref.WeakReference<>(replaced);
    java.lang.ref.WeakReference<Object> removedRef = new java.lang.ref.WeakReference<>(removed);
    t.put(3, 4, "ref", 0, 0, 0, removed, removed, 0, 0, 0, false);
    t.put(1, 2, "ref", 0, 0, 0, replaced, replaced, 0, 0, 0, false);
    t.put(1, 2, "ref", 0, 0, 0, null, null, 1, 2, 3, true); // replaces it: a dead slot between two live ones
    replaced = null;
    gc(replacedRef);
    assertThat(replacedRef.get()).as("a replaced entry's node").isNull();
    t.removeOldest(); // (3, 4)
    assertThat(t.size()).isEqualTo(1);
    assertThat(t.find(3, 4, "ref")).isEqualTo(-1);
    removed = null;
    gc(removedRef);
    assertThat(removedRef.get()).as("a removed entry's node").isNull();
    for (int i = 0; i < 300; i++) { // past the initial ring: every slot reused or rebuilt
      t.put(i, 0, null, 0, 0, 0, null, null, 0, 0, 0, false);
    }
    assertThat(t.size()).isEqualTo(4);
  }

  private static void gc(java.lang.ref.WeakReference<?> ref) throws InterruptedException {
    for (int i = 0; i < 20 && ref.get() != null; i++) {
      System.gc();
      Thread.sleep(20);
    }
  }

  private static Key key(int k) {
    // few distinct references, consecutive numbers: hashes close together
    return new Key(2L * k + 1, k % 3 == 0 ? 0 : 0x7f000001L + k % 5, k % 4 == 0 ? null : "ep" + (k % 7));
  }

  private static void check(
      RecentEnds t, LinkedHashMap<Key, Value> model, int keys, IntFunction<Key> keyOf, int max, int step) {
    String at = "bound " + max + ", step " + step;
    assertThat(t.size()).as(at).isEqualTo(model.size());
    int oldest = t.oldest();
    if (model.isEmpty()) {
      assertThat(oldest).as(at).isEqualTo(-1);
    } else {
      Map.Entry<Key, Value> first = model.entrySet().iterator().next();
      assertThat(oldest).as(at).isGreaterThanOrEqualTo(0);
      assertThat(t.keyA(oldest)).as(at).isEqualTo(first.getKey().a());
      assertThat(t.keyB(oldest)).as(at).isEqualTo(first.getKey().b());
      assertThat(t.keyRef(oldest)).as(at).isEqualTo(first.getKey().ref());
      assertThat(t.retainUntil(oldest)).as(at).isEqualTo(first.getValue().keepUntil());
    }
    if (step % 97 != 0) {
      return; // every key now and then: the whole content
    }
    for (int k = 0; k < keys; k++) {
      Key key = keyOf.apply(k);
      Value v = model.get(key);
      int slot = t.find(key.a(), key.b(), key.ref());
      if (v == null) {
        assertThat(slot).as(at + " " + key).isEqualTo(-1);
        continue;
      }
      assertThat(slot).as(at + " " + key).isGreaterThanOrEqualTo(0);
      assertThat(List.of(t.startNs(slot), t.endNs(slot), t.retainUntil(slot), t.traceIdHigh(slot), t.traceIdLow(slot), t.spanId(slot)))
          .as(at).isEqualTo(List.of(v.start(), v.end(), v.keepUntil(), v.traceHigh(), v.traceLow(), v.span()));
      assertThat(t.node(slot)).as(at).isEqualTo(v.node());
      assertThat(t.sampled(slot)).as(at).isEqualTo(v.sampled());
    }
    List<Key> order = new ArrayList<>();
    for (int slot : t.liveSlots()) {
      order.add(new Key(t.keyA(slot), t.keyB(slot), t.keyRef(slot)));
    }
    assertThat(order).as(at).containsExactlyElementsOf(model.keySet());
  }
}
