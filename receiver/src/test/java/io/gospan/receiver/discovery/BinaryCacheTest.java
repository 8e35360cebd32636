package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.probe.ExeKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inspection cache's key follows the file, not its path: a hard link hits, a file rewritten in
 * place or replaced by another at the same path misses; least recently used entries go first.
 */
class BinaryCacheTest {

  @TempDir Path dir;

  @Test
  void aHardLinkHitsAndAChangedOrReplacedFileMisses() throws Exception {
    Path bin = Files.writeString(dir.resolve("client"), "v1");
    // (a new link changes the inode's ctime: links made at install time, before the first run)
    Path link = Files.createLink(dir.resolve("other-name"), bin);
    BinaryCache<String> cache = new BinaryCache<>(4);
    BinaryCache.FileIdentity id = BinaryCache.FileIdentity.of(bin);
    assertThat(id.key()).isEqualTo(ExeKey.of(bin));
    assertThat(id.size()).isEqualTo(2);
    cache.put(id, "inspection of v1");

    assertThat(cache.get(BinaryCache.FileIdentity.of(link))).contains("inspection of v1");

    // rewritten in place: same inode, other size and times
    Files.writeString(bin, "v2 longer");
    assertThat(cache.get(BinaryCache.FileIdentity.of(bin))).isEmpty();
    // same size, mtime set back: the change time still differs
    Files.writeString(bin, "v3");
    Files.setLastModifiedTime(bin, FileTime.fromMillis(id.mtimeNanos() / 1_000_000));
    BinaryCache.FileIdentity again = BinaryCache.FileIdentity.of(bin);
    assertThat(again.key()).isEqualTo(id.key());
    assertThat(again.ctimeNanos()).isNotEqualTo(id.ctimeNanos());
    assertThat(cache.get(again)).isEmpty();
    // replaced by a new file at the same path (a deploy): another inode
    Path tmp = Files.writeString(dir.resolve("client.new"), "v1");
    Files.move(tmp, bin, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertThat(cache.get(BinaryCache.FileIdentity.of(bin))).isEmpty();
    assertThat(cache.hits()).isEqualTo(1);
    assertThat(cache.misses()).isEqualTo(3);
  }

  @Test
  void boundedLeastRecentlyUsedFirst() throws Exception {
    BinaryCache<Integer> cache = new BinaryCache<>(2);
    BinaryCache.FileIdentity[] ids = new BinaryCache.FileIdentity[3];
    for (int i = 0; i < 3; i++) {
      ids[i] = BinaryCache.FileIdentity.of(Files.writeString(dir.resolve("b" + i), "x" + i));
    }
    cache.put(ids[0], 0);
    cache.put(ids[1], 1);
    assertThat(cache.get(ids[0])).contains(0); // 1 is now the least recently used
    cache.put(ids[2], 2);
    assertThat(cache.size()).isEqualTo(2);
    assertThat(cache.get(ids[1])).isEmpty();
    assertThat(cache.get(ids[0])).contains(0);
    assertThat(cache.get(ids[2])).contains(2);
    assertThat(new BinaryCache<Integer>(0)).satisfies(c -> {
      c.put(ids[0], 0);
      assertThat(c.size()).isZero();
    });
  }
}
