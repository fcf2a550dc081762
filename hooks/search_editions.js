/* Search in an edition's own language, loaded by the theme's search worker.

   hooks/search_editions.py writes, for each edition, assets/javascripts/lunr/min/
   lunr.<name>.min.js: the lunr-languages file of the stemmer it uses (where lunr has
   one), this file, then a line that registers the edition (lunr.edition(...)). Its index
   names <name> as its language, and the worker loads that file and uses the plugin.

   Each word is indexed under two terms: its stem as the language writes it, with the
   accents then folded (so that "caché" and "cache" meet), and the stem of the word with
   its accents folded first (so that a word typed without its accents, "cuantizacion",
   finds the word the page writes with them). A query's words are read the same way.

   The theme's worker adds a trailing wildcard to every word of a query ("cache*", so
   that a word matches while it is still being typed), and lunr skips its pipeline for
   such a word: the query's words were never stemmed, and a whole word ("quantization*")
   missed the stem its pages were indexed under ("quantiz"). The query is therefore
   rewritten here, each wildcard word to its stems, each with the wildcard kept. */
(function (lunr) {
  "use strict";

  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  }

  /* Czech: lunr has no stemmer. The light stemmer of Dolamic and Savoy ("Indexing and
     stemming approaches for the Czech language", 2009), as Lucene's CzechStemmer writes
     it: case endings, then possessive endings, then a few consonant alternations. */
  var CZECH_CASE = [
    [7, ["atech"]],
    [6, ["ětem", "etem", "atům"]],
    [5, ["ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ěte", "ete", "ěti", "eti", "ího", "iho", "ími",
      "ímu", "imu", "ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými"]],
    [4, ["em", "es", "ém", "ím", "ům", "at", "ám", "os", "us", "ým", "mi", "ou"]],
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
    if (!cut && s.length > 3 && "aeiouůyáéíýě".indexOf(s.charAt(s.length - 1)) >= 0) s = s.slice(0, -1);
    if (s.length > 5 && /(ov|in|ův)$/.test(s)) s = s.slice(0, -2);
    if (!s) return s;
    if (/čt$/.test(s)) return s.slice(0, -2) + "ck";
    if (/št$/.test(s)) return s.slice(0, -2) + "sk";
    var last = s.charAt(s.length - 1);
    if (last === "c" || last === "č") return s.slice(0, -1) + "k";
    if (last === "z" || last === "ž") return s.slice(0, -1) + "h";
    if (s.length > 1 && s.charAt(s.length - 2) === "e") return s.slice(0, -2) + last;
    if (s.length > 2 && s.charAt(s.length - 2) === "ů") return s.slice(0, -2) + "o" + last;
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

  /* The terms a word is indexed and searched under. ``before`` rewrites a word before it
     is stemmed (Galician: a plural in -ns, "cuantizacións", as the singular Spanish's
     stemmer knows, "cuantización"). */
  function terms(stem, before) {
    return function (word) {
      var w = before(word.toLowerCase());
      var found = [fold(stem(w)), stem(fold(w))];
      return found[0] === found[1] ? [found[0]] : found;
    };
  }

  var BEFORE = {
    gl: function (w) {
      return w.replace(/ns$/, "n");
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
    var words = terms(wordStemmer(options.stemmer), before);
    var stemmer = function (token) {
      return words(token.toString()).map(function (term) {
        return token.clone(function () { return term; });
      });
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
    plugin.words = words;
    lunr[name] = plugin;
  };

  /* A query's wildcard words through the index's pipeline: "quantization*" becomes
     "quantiz*". A word the pipeline drops (a stop word) is searched as typed. */
  var query = lunr.Index.prototype.query;
  lunr.Index.prototype.query = function (build) {
    var pipeline = this.pipeline;
    return query.call(this, function (q) {
      build.call(q, q);
      var clauses = [];
      q.clauses.forEach(function (clause) {
        var m = /^([^*]+)\*$/.exec(clause.term);
        var found = m && !clause.usePipeline ? pipeline.runString(m[1]) : [];
        if (!found.length) {
          clauses.push(clause);
          return;
        }
        found.forEach(function (term) {
          var copy = Object.assign({}, clause, { term: term + "*" });
          clauses.push(copy);
        });
      });
      q.clauses = clauses;
    });
  };
})(self.lunr);
