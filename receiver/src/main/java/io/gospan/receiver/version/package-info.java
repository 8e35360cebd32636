/** gospan's version from the build ({@link io.gospan.receiver.version.GospanVersion}); depends on nothing. */
package io.gospan.receiver.version;
