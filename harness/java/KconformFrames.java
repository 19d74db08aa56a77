// Apache's own parser as an oracle: kafka-clients (3.7.2, or a later release's) reads the frames kconform gives it, the
// way a Java client reads a broker's answer (AbstractResponse.parseResponse with the request's
// header: response header, correlation id, body) and the way Apache's broker reads a request
// (RequestHeader.parse, then AbstractRequest.parseRequest). Compiled by kconform against the jars
// the Apache target caches (src/apache/parser.rs).
//
// One frame a line on standard input, one verdict a line on standard output:
//   response KEY VERSION CORRELATION HEX   (HEX: the frame after its 4-byte size)
//   request HEX
//   utf8 HEX                               (bytes read as Apache reads a string field)
// answers
//   ok HEX        the body as Apache's writer encodes what Apache's parser read, with the unknown
//                 tagged fields left out (they carry no value a parser knows): equal bytes mean
//                 equal values
//   err REASON    Apache's parser refuses the frame, or reads an answer with bytes left over (the
//                 Java client ignores trailing bytes; an answer with them is not well-formed);
//                 after a request, Apache's broker ignores them, and so does this

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestAndSize;
import org.apache.kafka.common.requests.RequestHeader;

public class KconformFrames {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, false, "US-ASCII");
        String line;
        while ((line = in.readLine()) != null) {
            String verdict;
            try {
                verdict = "ok " + hex(judge(line.trim().split(" ")));
            } catch (Throwable t) {
                String why = t.getClass().getSimpleName() + ": " + t.getMessage();
                verdict = "err " + why.replace('\n', ' ').replace('\r', ' ');
            }
            out.println(verdict);
            out.flush();
        }
    }

    static byte[] judge(String[] words) throws Exception {
        ApiMessage data;
        short version;
        ByteBuffer buffer;
        if (words[0].equals("response")) {
            ApiKeys api = ApiKeys.forId(Short.parseShort(words[1]));
            version = Short.parseShort(words[2]);
            int correlation = Integer.parseInt(words[3]);
            buffer = ByteBuffer.wrap(unhex(words.length > 4 ? words[4] : ""));
            RequestHeader sent = new RequestHeader(api, version, "kconform", correlation);
            AbstractResponse response = AbstractResponse.parseResponse(buffer, sent);
            data = response.data();
        } else if (words[0].equals("request")) {
            buffer = ByteBuffer.wrap(unhex(words.length > 1 ? words[1] : ""));
            RequestHeader header = RequestHeader.parse(buffer);
            version = header.apiVersion();
            RequestAndSize request = parseRequest(header.apiKey(), version, buffer);
            data = request.request.data();
            buffer.position(buffer.limit());
        } else if (words[0].equals("utf8")) {
            byte[] bytes = unhex(words.length > 1 ? words[1] : "");
            return new String(bytes, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        } else {
            throw new IllegalArgumentException("a line starts with 'response', 'request' or 'utf8'");
        }
        if (buffer.remaining() != 0) {
            throw new IllegalStateException(buffer.remaining() + " byte(s) left over after the last field");
        }
        forgetUnknownTags(data, new IdentityHashMap<>());
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer out = ByteBuffer.allocate(data.size(cache, version));
        data.write(new ByteBufferAccessor(out), cache, version);
        return out.array();
    }

    // AbstractRequest.parseRequest reads a ByteBuffer up to 3.9 and a Readable (a
    // ByteBufferAccessor over the same buffer, as 4.x's broker passes it) from 4.0: the one the
    // jars on the class path have is called, so the same source is every release's parser.
    static RequestAndSize parseRequest(ApiKeys api, short version, ByteBuffer buffer) throws Exception {
        for (Method m : AbstractRequest.class.getMethods()) {
            Class<?>[] params = m.getParameterTypes();
            if (!m.getName().equals("parseRequest") || params.length != 3) {
                continue;
            }
            Object source = params[2] == ByteBuffer.class ? buffer : new ByteBufferAccessor(buffer);
            try {
                return (RequestAndSize) m.invoke(null, api, version, source);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception) {
                    throw (Exception) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw e;
            }
        }
        throw new IllegalStateException("no AbstractRequest.parseRequest in these jars");
    }

    /** Clears every message's unknown tagged fields, nested ones too. */
    static void forgetUnknownTags(Object o, Map<Object, Boolean> seen) throws IllegalAccessException {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection) {
            for (Object e : (Collection<?>) o) {
                forgetUnknownTags(e, seen);
            }
            return;
        }
        if (!(o instanceof Message)) {
            return;
        }
        ((Message) o).unknownTaggedFields().clear();
        for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                f.setAccessible(true);
                forgetUnknownTags(f.get(o), seen);
            }
        }
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder(2 * b.length);
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }
}
