/* Search in an edition's own language, loaded by the theme's search worker.

   hooks/search_editions.py writes, for each edition, assets/javascripts/lunr/min/
   lunr.<name>.min.js: the lunr-languages file of the stemmer it uses (where lunr has
   one), this file, then a line that registers the edition (lunr.edition(...)). Its index
   names <name> as its language, and the worker loads that file and uses the plugin.

   Each word is indexed under one term: the word with its accents folded (so that "caché"
   and "cache", or a word typed without its accents, meet), read back into the spelling
   its stemmer knows where folding lost it, then stemmed. A query's words are read the
   same way.

   The theme's worker adds a trailing wildcard to every word of a query ("cache*", so
   that a word matches while it is still being typed), and lunr skips its pipeline for
   such a word: the query's words were never stemmed, and a whole word ("quantization*")
   missed the stem its pages were indexed under ("quantiz"). The query is therefore
   rewritten here, each wildcard word to its stem, with the wildcard kept. */
(function (lunr) {
  "use strict";

  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  }

  /* Czech: lunr has no stemmer. The light stemmer of Dolamic and Savoy ("Indexing and
     stemming approaches for the Czech language", 2009), as Lucene's CzechStemmer writes
     it (case endings, then possessive endings, then the alternations c/k and z/h), on
     words whose accents are folded: its endings are folded with them, and the
     alternations that only accents tell apart (čt/ct, št/st) are left out. */
  var CZECH_CASE = [
    [7, ["atech"]],
    [6, ["etem", "atum"]],
    [5, ["ech", "ich", "eho", "emi", "emu", "ete", "eti", "iho", "imi", "imu", "ach", "ata", "aty", "ych", "ama",
      "ami", "ove", "ovi", "ymi"]],
    [4, ["em", "es", "im", "um", "at", "am", "os", "us", "ym", "mi", "ou"]],
  ];

  function czechStem(word) {
    var s = word;
    var cut = false;
    for (var i = 0; i < CZECH_CASE.length && !cut; i++) {
      var longer = CZECH_CASE[i][0];
      var endings = CZECH_CASE[i][1];
      for (var j = 0; j < endings.length; j++) {
        if (s.length > longer && s.slice(-endings[j].length) === endings[j]) {
          s = s.slice(0, -endings[j].length);
          cut = true;
          break;
        }
      }
    }
    if (!cut && s.length > 3 && "aeiouy".indexOf(s.charAt(s.length - 1)) >= 0) s = s.slice(0, -1);
    if (s.length > 5 && /(ov|in|uv)$/.test(s)) s = s.slice(0, -2);
    if (!s) return s;
    var last = s.charAt(s.length - 1);
    if (last === "c") return s.slice(0, -1) + "k";
    if (last === "z") return s.slice(0, -1) + "h";
    if (s.length > 1 && s.charAt(s.length - 2) === "e") return s.slice(0, -2) + last;
    return s;
  }

  /* A stemmer of words (lunr's own for English, a lunr-languages one, or Czech's above). */
  function wordStemmer(name) {
    if (name === "cs") return czechStem;
    var stemmer = name === "en" ? lunr.stemmer : lunr[name].stemmer;
    return function (word) {
      return stemmer(new lunr.Token(word, {})).toString();
    };
  }

  /* A folded word in the spelling its stemmer knows: Spanish's knows the suffix -ción
     with its accent only (every word in -cion is written -ción), and Galician's plural
     in -ns ("cuantizacións") is Spanish's singular ("cuantización"). */
  function accentCion(w) {
    return w.replace(/cion$/, "ción");
  }
  var BEFORE = {
    es: accentCion,
    gl: function (w) {
      return accentCion(w.replace(/ns$/, "n"));
    },
  };

  /* lunr's trimmer reads \W as ASCII does, and cut "caché" to "cach": letters of any script here. */
  var trimmer = function (token) {
    return token.update(function (s) {
      return s.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    });
  };
  lunr.Pipeline.registerFunction(trimmer, "trimmer-edition");

  /* An edition's plugin, lunr[name]: ``language`` the edition's, ``stemmer`` the language
     whose stemmer it uses, ``stopWords`` its stop words (else the stemmer language's). */
  lunr.edition = function (name, options) {
    var own = options.stemmer === "en" ? lunr : lunr[options.stemmer] || {};
    var stop = options.stopWords ? lunr.generateStopWordFilter(options.stopWords) : own.stopWordFilter;
    var before = BEFORE[options.language] || function (w) { return w; };
    var stem = wordStemmer(options.stemmer);
    var term = function (word) {
      return fold(stem(before(fold(word.toLowerCase()))));
    };
    var stemmer = function (token) {
      return token.update(term);
    };
    lunr.Pipeline.registerFunction(stemmer, "stemmer-" + name);
    if (options.stopWords) lunr.Pipeline.registerFunction(stop, "stopWordFilter-" + name);

    var plugin = function () {
      this.pipeline.reset();
      this.pipeline.add(trimmer, stop, stemmer);
      this.searchPipeline.reset();
      this.searchPipeline.add(stemmer);
    };
    plugin.stemmer = stemmer;
    plugin.stopWordFilter = stop;
    plugin.trimmer = trimmer;
    plugin.term = term;
    lunr[name] = plugin;
  };

  /* A query's wildcard words through the index's pipeline: "quantization*" becomes
     "quantiz*". A word the pipeline drops (a stop word) is searched as typed. */
  var query = lunr.Index.prototype.query;
  lunr.Index.prototype.query = function (build) {
    var pipeline = this.pipeline;
    return query.call(this, function (q) {
      build.call(q, q);
      q.clauses.forEach(function (clause) {
        var m = /^([^*]+)\*$/.exec(clause.term);
        var found = m && !clause.usePipeline ? pipeline.runString(m[1]) : [];
        if (found.length === 1 && found[0]) clause.term = found[0] + "*";
      });
    });
  };
})(self.lunr);
